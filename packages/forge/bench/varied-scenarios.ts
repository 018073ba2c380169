/**
 * Workloads caches cannot flatter (issue 35): 10 000 users each with a token of their own, 1 000
 * repositories with a release each, requests spread over all of them, on SQLite and PostgreSQL, with
 * every response cache on and off (the off run's twin is the on run, so "vs twin" is off ÷ on).
 *
 * - varied token lookup: `GET /users/{random user}`, each request with a random user's own token.
 * - varied workload: the same token spread over profiles (45 %), latest releases (45 %) and release
 *   lists (5 %) of random repositories, and 5 % writes (a repository description edited by its owner)
 *   interleaved, each of which moves the change stamp.
 *
 * The same-bytes baseline answers the first captured answer to every request.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchRequest, Scenario } from '../../../bench/scenario.js';
import { TokenScope } from '../src/auth/scopes.js';
import { generateToken } from '../src/auth/secrets.js';
import { openDatabase } from '../src/store/database.js';
import { insertRelease } from '../src/store/releases.js';
import { insertRepository } from '../src/store/repositories.js';
import { type BenchStore, startForgeOn } from './bench-store.js';

const USERS = 10_000;
const REPOS = 1_000;
const userName = (i: number) => `vuser${String(i).padStart(5, '0')}`;
const repoPath = (k: number) => `${userName(k)}/repo${k}`;

/** Seeds the users, one token each (returned, by user index), the repositories and their releases. */
export async function seedVaried(databaseUrl: string): Promise<string[]> {
  const forge = await openDatabase({ url: databaseUrl });
  const tokens: string[] = [];
  try {
    const now = Math.floor(Date.now() / 1000);
    const scope = TokenScope.parse('read:user,write:repository').normalize();
    await forge.db.transaction().execute(async (trx) => {
      for (let start = 0; start < USERS; start += 1000) {
        const rows = [];
        for (let i = start; i < start + 1000; i++) {
          const name = userName(i);
          rows.push({
            lower_name: name,
            name,
            email: `${name}@example.com`,
            created_unix: now,
            updated_unix: now,
          });
        }
        await trx.insertInto('user').values(rows).execute();
      }
      const users = await trx
        .selectFrom('user')
        .select(['id', 'lower_name'])
        .where('lower_name', 'like', 'vuser%')
        .execute();
      const ids = new Map(users.map((user) => [user.lower_name, user.id]));
      for (let start = 0; start < USERS; start += 1000) {
        const rows = [];
        for (let i = start; i < start + 1000; i++) {
          const secret = generateToken();
          tokens[i] = secret.token;
          rows.push({
            uid: ids.get(userName(i))!,
            name: 'varied',
            token_hash: secret.hash,
            token_salt: secret.salt,
            token_last_eight: secret.lastEight,
            scope,
            created_unix: now,
            updated_unix: now,
          });
        }
        await trx.insertInto('access_token').values(rows).execute();
      }
      for (let k = 0; k < REPOS; k++) {
        const owner = await trx
          .selectFrom('user')
          .selectAll()
          .where('id', '=', ids.get(userName(k))!)
          .executeTakeFirstOrThrow();
        const repo = await insertRepository(trx, {
          owner,
          name: `repo${k}`,
          description: '',
          website: '',
          isPrivate: false,
          defaultBranch: 'main',
          now,
        });
        await insertRelease(trx, {
          repoId: repo.id,
          publisherId: owner.id,
          tagName: 'v1',
          target: 'main',
          title: `Release of repo${k}`,
          note: 'Notes.',
          sha1: '0123456789abcdef0123456789abcdef01234567',
          numCommits: 1,
          isDraft: false,
          isPrerelease: false,
          isTag: false,
          createdUnix: now,
        });
      }
    });
    return tokens;
  } finally {
    await forge.close();
  }
}

const pick = (n: number) => Math.floor(Math.random() * n);

/** One request of the token lookup workload. */
export function tokenLookup(tokens: string[]): BenchRequest {
  return {
    path: `/api/v1/users/${userName(pick(USERS))}`,
    headers: { authorization: `token ${tokens[pick(USERS)]}` },
  };
}

let written = 0;
/** One request of the mixed workload. */
export function mixed(tokens: string[]): BenchRequest {
  const roll = Math.random();
  const k = pick(REPOS);
  const authorization = `token ${tokens[pick(USERS)]}`;
  if (roll < 0.45) return tokenLookup(tokens);
  if (roll < 0.9) return { path: `/api/v1/repos/${repoPath(k)}/releases/latest`, headers: { authorization } };
  if (roll < 0.95)
    return { path: `/api/v1/repos/${repoPath(k)}/releases?limit=10`, headers: { authorization } };
  written += 1;
  return {
    method: 'PATCH',
    path: `/api/v1/repos/${repoPath(k)}`,
    headers: { authorization: `token ${tokens[k]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ description: `edit ${written}` }),
  };
}

function variedScenario(
  name: string,
  store: BenchStore,
  cache: boolean,
  next: (tokens: string[]) => BenchRequest,
): Scenario {
  const label = `${name} [${store}${cache ? '' : ', caches off'}]`;
  return {
    name: label,
    ...(cache ? {} : { twin: `${name} [${store}]` }),
    async prepare() {
      let tokens: string[] = [];
      const configFile = (dir: string) => {
        const path = join(dir, 'forge.toml');
        writeFileSync(path, `[cache]\nenabled = ${cache}\n`);
        return path;
      };
      const service = await startForgeOn(
        store,
        async (_dir, url) => {
          tokens = await seedVaried(url);
        },
        configFile,
      );
      const first = tokenLookup(tokens);
      return {
        baseUrl: service.baseUrl,
        request: { ...first, vary: () => next(tokens) },
        notes: { users: USERS, tokens: USERS, repos: REPOS, cache: cache ? 'on' : 'off' },
        ...(service.countStatements ? { countStatements: service.countStatements } : {}),
        teardown: service.stop,
      };
    },
  };
}

/** The varied scenarios, on SQLite and (FORGE_BENCH_DATABASE_URL set) one PostgreSQL process. */
export function variedScenarios(): Scenario[] {
  const stores: BenchStore[] = process.env.FORGE_BENCH_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  return stores.flatMap((store) =>
    [true, false].flatMap((cache) => [
      variedScenario('forge varied token lookup (10 000 users, a token each)', store, cache, tokenLookup),
      variedScenario('forge varied workload (10 000 tokens, 1 000 repos, 5 % writes)', store, cache, mixed),
    ]),
  );
}
