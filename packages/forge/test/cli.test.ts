import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = new URL('..', import.meta.url).pathname;
// The CLI from source through tsx, so the test does not depend on a prior build.
const cliArgs = ['--import', 'tsx', join(packageDir, 'src/cli.ts')];

/** Runs `forge …` to completion. */
function forgeCli(args: string[]) {
  return run(process.execPath, [...cliArgs, ...args], {
    cwd: packageDir,
    env: { ...process.env, FORGE_DATABASE_URL: '' },
  });
}

interface Served {
  child: ChildProcess;
  url: string;
  stdout: () => string;
}

/** Starts `forge serve` and waits (generously) until it logs its address. */
async function serve(dataDir: string): Promise<Served> {
  const child = spawn(
    process.execPath,
    [...cliArgs, 'serve', '--bind', '127.0.0.1:0', '--data-dir', dataDir],
    {
      cwd: packageDir,
      env: { ...process.env, FORGE_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  // Resolves with the address once a log line names it; fails when the process ends first or a minute passes.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail('did not log its address within 60 s'), 60_000);
    function fail(why: string) {
      clearTimeout(timer);
      reject(new Error(`forge serve ${why}:\n${out}`));
    }
    const take = (chunk: Buffer) => {
      out += chunk;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (match) {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve(match[1]!);
      }
    };
    const onExit = () => fail('exited');
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.once('exit', onExit);
  });
  return { child, url, stdout: () => out };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

describe('forge CLI', () => {
  let dataDir: string;
  let served: Served;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'forge-cli-'));
    served = await serve(dataDir);
  });
  afterAll(async () => {
    await stop(served.child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('first start on an empty database creates an administrator and prints its password once', async () => {
    const password = /created site administrator "forge-admin" with password: (\S+)/.exec(
      served.stdout(),
    )?.[1];
    expect(password).toBeDefined();
    const res = await fetch(`${served.url}/api/v1/user`, { headers: basic('forge-admin', password!) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ login: 'forge-admin', is_admin: true });
  });

  it('admin user create works against the same data dir while the server runs', async () => {
    const { stdout } = await forgeCli([
      'admin',
      'user',
      'create',
      '--username',
      'carol',
      '--password',
      'carol-secret',
      '--email',
      'carol@example.com',
      '--must-change-password=false',
      '--data-dir',
      dataDir,
    ]);
    expect(stdout).toBe("New user 'carol' has been successfully created!\n");
    const res = await fetch(`${served.url}/api/v1/user`, { headers: basic('carol', 'carol-secret') });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ login: 'carol', is_admin: false });
  });

  it('admin user create defaults to must-change-password and --admin makes a site admin', async () => {
    await forgeCli([
      'admin',
      'user',
      'create',
      '--username',
      'dave',
      '--password',
      'dave-secret',
      '--email',
      'dave@example.com',
      '--admin',
      '--data-dir',
      dataDir,
    ]);
    const res = await fetch(`${served.url}/api/v1/user`, { headers: basic('dave', 'dave-secret') });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toMatch(/^You must change your password/);
  });

  it('admin user create reports a taken name and exits non-zero', async () => {
    const failure = await forgeCli([
      'admin',
      'user',
      'create',
      '--username',
      'carol',
      '--password',
      'carol-secret',
      '--email',
      'c2@example.com',
      '--data-dir',
      dataDir,
    ]).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1, stderr: 'forge: user already exists [name: carol]\n' });
  });

  it('the first-start message names the command that changes the password', () => {
    expect(served.stdout()).toContain(
      'change it with `forge admin user change-password --username forge-admin --password <new password> --must-change-password=false`',
    );
  });

  it('admin user change-password sets a new password and, with =false, lifts must-change-password', async () => {
    const before = await fetch(`${served.url}/api/v1/user`, { headers: basic('dave', 'dave-secret') });
    expect(before.status).toBe(403);
    const { stdout } = await forgeCli([
      'admin',
      'user',
      'change-password',
      '--username',
      'dave',
      '--password',
      'dave-new-secret',
      '--must-change-password=false',
      '--data-dir',
      dataDir,
    ]);
    expect(stdout).toBe("dave's password has been successfully updated!\n");
    const old = await fetch(`${served.url}/api/v1/user`, { headers: basic('dave', 'dave-secret') });
    expect(old.status).toBe(401);
    const res = await fetch(`${served.url}/api/v1/user`, { headers: basic('dave', 'dave-new-secret') });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ login: 'dave' });
    // Without the flag the new password must be changed again (Gitea's default).
    await forgeCli([
      'admin',
      'user',
      'change-password',
      '--username',
      'dave',
      '--password',
      'dave-third-secret',
      '--data-dir',
      dataDir,
    ]);
    const again = await fetch(`${served.url}/api/v1/user`, { headers: basic('dave', 'dave-third-secret') });
    expect(again.status).toBe(403);
  });

  it('admin user change-password on an unknown user or with a short password exits non-zero', async () => {
    const unknown = await forgeCli([
      'admin',
      'user',
      'change-password',
      '--username',
      'nobody',
      '--password',
      'long-enough',
      '--data-dir',
      dataDir,
    ]).catch((error: { code: number; stderr: string }) => error);
    expect(unknown).toMatchObject({ code: 1, stderr: 'forge: user does not exist [name: nobody]\n' });
    const short = await forgeCli([
      'admin',
      'user',
      'change-password',
      '--username',
      'carol',
      '--password',
      'short',
      '--data-dir',
      dataDir,
    ]).catch((error: { code: number; stderr: string }) => error);
    expect(short).toMatchObject({ code: 1, stderr: 'forge: password is shorter than 8 characters\n' });
  });

  it('admin repo-sync-releases syncs every repository, or the one --repo names', async () => {
    const all = await forgeCli(['admin', 'repo-sync-releases', '--data-dir', dataDir]);
    expect(all.stdout).toBe('Synchronized releases of 0 repositories.\n');
    const unknown = await forgeCli([
      'admin',
      'repo-sync-releases',
      '--repo',
      'a/b',
      '--data-dir',
      dataDir,
    ]).catch((error: { code: number; stderr: string }) => error);
    expect(unknown).toMatchObject({ code: 1, stderr: 'forge: repository a/b does not exist\n' });
  });

  it('a restart on the same data dir keeps users and prints no new password', async () => {
    await stop(served.child);
    served = await serve(dataDir);
    expect(served.stdout()).not.toContain('created site administrator');
    const res = await fetch(`${served.url}/api/v1/user`, { headers: basic('carol', 'carol-secret') });
    expect(res.status).toBe(200);
  });

  it('a config file error names the file and the key', async () => {
    const file = join(dataDir, 'bad.toml');
    writeFileSync(file, '[api]\nmax_response_items = "many"\n');
    const failure = await forgeCli(['serve', '--config', file, '--data-dir', dataDir]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toContain(`config ${file}: key "api.max_response_items"`);
  });
});
