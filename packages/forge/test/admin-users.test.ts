import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestForge, type TestForge, uniqueName } from './harness.js';

describe('admin users', () => {
  let forge: TestForge;
  const swagger = () => `${forge.appUrl}api/swagger`;
  const create = (body: Record<string, unknown>) =>
    forge.request('POST', '/admin/users', { token: forge.admin.token, body });

  beforeAll(async () => {
    forge = await startTestForge();
  });
  afterAll(() => forge.close());

  it('POST /admin/users creates an active user and answers 201 with the admin view', async () => {
    const username = uniqueName('New');
    const res = await create({
      username,
      email: `${username}@example.com`,
      password: 'password123',
      full_name: 'N U',
      must_change_password: false,
      visibility: 'limited',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      login: username,
      username,
      email: `${username}@example.com`,
      full_name: 'N U',
      active: true,
      is_admin: false,
      visibility: 'limited',
      restricted: false,
    });
    const signIn = await forge.request('GET', '/user', {
      basic: { username: username.toLowerCase(), password: 'password123' },
    });
    expect(signIn.status).toBe(200);
  });

  it('rejects taken names and e-mails, reserved names and invalid e-mails with 422, short passwords with 400', async () => {
    const username = uniqueName();
    expect(
      (await create({ username, email: `${username}@example.com`, password: 'password123' })).status,
    ).toBe(201);
    const name = await create({
      username: username.toUpperCase(),
      email: 'other@example.com',
      password: 'password123',
    });
    expect(name.status).toBe(422);
    expect(name.body).toEqual({
      message: `user already exists [name: ${username.toUpperCase()}]`,
      url: swagger(),
    });
    const mail = await create({
      username: uniqueName(),
      email: `${username.toUpperCase()}@EXAMPLE.com`,
      password: 'password123',
    });
    expect(mail.status).toBe(422);
    expect(mail.body.message).toBe(`e-mail already in use [email: ${username.toUpperCase()}@EXAMPLE.com]`);
    expect(
      (await create({ username: 'explore', email: 'e@example.com', password: 'password123' })).body.message,
    ).toBe('name is reserved [name: explore]');
    const badMail = await create({ username: uniqueName(), email: 'not-an-email', password: 'password123' });
    expect(badMail.status).toBe(422);
    expect(badMail.body.message).toBe('e-mail invalid [email: not-an-email]');
    const short = await create({ username: uniqueName(), email: 'short@example.com', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body).toEqual({ message: 'PasswordIsRequired', url: swagger() });
    const missing = await create({ username: uniqueName() });
    expect(missing.status).toBe(422);
    expect(missing.body.message).toBe('[Email]: Required');
    const nothingWritten = await forge.request('GET', `/users/search?q=short@example.com`, {
      token: forge.admin.token,
    });
    expect(nothingWritten.body.data).toEqual([]);
  });

  it('GET /admin/users pages all users with list headers', async () => {
    const res = await forge.request('GET', '/admin/users?limit=1', { token: forge.admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    expect(Number(res.headers.get('x-total-count'))).toBeGreaterThan(1);
    expect(res.headers.get('link')).toContain('rel="next"');
  });

  it('PATCH /admin/users/{username} applies visibility, admin, restricted, active, prohibit_login, keep_email_private', async () => {
    const user = await forge.createUser();
    const res = await forge.request('PATCH', `/admin/users/${user.username}`, {
      token: forge.admin.token,
      body: {
        visibility: 'private',
        admin: true,
        restricted: true,
        keep_email_private: true,
        location: 'Mars',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      visibility: 'private',
      is_admin: true,
      restricted: true,
      location: 'Mars',
    });
    const anonymous = await forge.request('GET', `/users/${user.username}`);
    expect(anonymous.status).toBe(404);
    expect(
      (await forge.request('PATCH', '/admin/users/nobody-here', { token: forge.admin.token, body: {} }))
        .status,
    ).toBe(404);
  });

  it('DELETE /admin/users/{username} removes the user and their tokens', async () => {
    const user = await forge.createUser();
    const token = await forge.createToken(user, ['read:user']);
    const res = await forge.request('DELETE', `/admin/users/${user.username}`, { token: forge.admin.token });
    expect(res.status).toBe(204);
    expect((await forge.request('GET', `/users/${user.username}`, { token: forge.admin.token })).status).toBe(
      404,
    );
    expect((await forge.request('GET', '/user', { token })).status).toBe(401);
    expect(
      (await forge.request('DELETE', `/admin/users/${user.username}`, { token: forge.admin.token })).status,
    ).toBe(404);
    const self = await forge.request('DELETE', `/admin/users/${forge.admin.username}`, {
      token: forge.admin.token,
    });
    expect(self.status).toBe(422);
  });
});
