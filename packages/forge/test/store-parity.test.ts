// Behaviour that must not depend on the store: this file runs on SQLite (forge project) and on
// PostgreSQL (forge-postgres project) with the same expectations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge } from './harness.js';
import { testingPostgres } from './test-database.js';

let forge: TestForge;
// Punctuation sorts differently under PostgreSQL's locale collations than in SQLite's byte order.
const names = ['parityB', 'parity_a', 'parity-a', 'parity.a', 'Paritya', 'parity1'];
// Byte order of the lower-cased names: '-' < '.' < '1' < '_' < 'a' < 'b'.
const expected = ['parity-a', 'parity.a', 'parity1', 'parity_a', 'Paritya', 'parityB'];

beforeAll(async () => {
  forge = await startTestForge();
  for (const username of names) await forge.createUser({ username });
}, 60_000);

afterAll(() => forge?.close());

const search = (query: string) =>
  forge.request('GET', `/users/search?${query}`, { token: forge.admin.token });

describe(`store parity (${testingPostgres() ? 'PostgreSQL' : 'SQLite'})`, () => {
  it('user search orders by lower-cased name in byte order, whatever the database locale', async () => {
    const response = await search('q=parity&limit=50');
    expect(response.status).toBe(200);
    expect(response.body.data.map((user: { login: string }) => user.login)).toEqual(expected);
    expect(response.headers.get('x-total-count')).toBe(String(names.length));
  });

  it('pages partition the ordered result exactly', async () => {
    const pages = [];
    for (const page of [1, 2, 3]) {
      const response = await search(`q=PARITY&limit=2&page=${page}`);
      expect(response.headers.get('x-total-count')).toBe(String(names.length));
      pages.push(...response.body.data.map((user: { login: string }) => user.login));
    }
    expect(pages).toEqual(expected);
  });

  it('search matches substrings case-insensitively, three characters or fewer included', async () => {
    const long = await search('q=RITY_A');
    expect(long.body.data.map((user: { login: string }) => user.login)).toEqual(['parity_a']);
    const short = await search('q=TY.');
    expect(short.body.data.map((user: { login: string }) => user.login)).toEqual(['parity.a']);
    const wildcard = await search('q=y%25a');
    expect(wildcard.body.data).toEqual([]);
  });

  it('search finds full names and e-mails after edits, with long, quoted and non-ASCII keywords', async () => {
    const logins = (response: { body: { data: { login: string }[] } }) =>
      response.body.data.map((user) => user.login);
    const user = await forge.createUser({ username: 'parity-edit', fullName: "O'Brien \\ ünïcode Näme" });
    expect(logins(await search(`q=${encodeURIComponent('BRIEN \\ ün')}`))).toEqual(['parity-edit']);
    // Longer than the indexed part of each suffix (12 characters): the LIKE decides past it.
    expect(logins(await search(`q=${encodeURIComponent("o'brien \\ ünïcode näme")}`))).toEqual([
      'parity-edit',
    ]);
    expect(logins(await search(`q=${encodeURIComponent("o'brien \\ ünïcode nämx")}`))).toEqual([]);
    const edited = await forge.request('PATCH', `/admin/users/${user.username}`, {
      token: forge.admin.token,
      body: { full_name: 'Renamed Person', email: 'fresh-parity-mail@example.org' },
    });
    expect(edited.status).toBe(200);
    expect(logins(await search('q=brien'))).toEqual([]);
    expect(logins(await search('q=NAMED%20PERS'))).toEqual(['parity-edit']);
    expect(logins(await search('q=h-parity-mail@exam'))).toEqual(['parity-edit']);
    const removed = await forge.request('DELETE', `/admin/users/${user.username}`, {
      token: forge.admin.token,
    });
    expect(removed.status).toBe(204);
    expect(logins(await search('q=named%20pers'))).toEqual([]);
  });

  it('user lookups ignore case', async () => {
    const response = await forge.request('GET', '/users/PARITYB', { token: forge.admin.token });
    expect(response.status).toBe(200);
    expect(response.body.login).toBe('parityB');
  });

  it('a second user differing only in case is refused', async () => {
    const response = await forge.request('POST', '/admin/users', {
      token: forge.admin.token,
      body: { username: 'PARITYb', email: 'other-parity@example.com', password: 'pw-long-enough-1' },
    });
    expect(response.status).toBe(422);
    expect(response.body.message).toBe('user already exists [name: PARITYb]');
  });
});
