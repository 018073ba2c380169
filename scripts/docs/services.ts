/**
 * The services as `npm start` runs them (the built commands, the example machine-api config, `./data/…` data dirs),
 * but in a temporary checkout and on free ports: for the docs' examples, and for the endpoint references
 * generated from the served API documents.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitForHttp } from '../../bench/service-process.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The addresses the docs' examples are written for: `npm start`'s defaults. */
export const defaultAddresses = { machineApi: '127.0.0.1:8080', forge: '127.0.0.1:3000' } as const;

export type ServiceName = keyof typeof defaultAddresses;

/** A temporary directory that looks like a checkout after `npm ci && npm run build`, with an empty `data/`. */
export function createCheckout(): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'docs-checkout-'));
  for (const entry of ['packages', 'node_modules', 'package.json']) {
    symlinkSync(join(repoRoot, entry), join(root, entry));
  }
  mkdirSync(join(root, 'data'));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** The data dir `scripts/start.mjs` gives each service, relative to the checkout. */
export const dataDirs: Record<ServiceName, string> = { machineApi: 'data/machine-api', forge: 'data' };

/** The command and arguments `scripts/start.mjs` uses for each service, on the given address. */
function commandLine(name: ServiceName, address: string): [string, string[]] {
  if (name === 'machineApi') {
    // Run as an executable, as npm start does, so that the V8 flags on its #! line apply.
    return [
      'packages/machine-api/bin/machine-api.js',
      [
        'serve',
        '--config',
        'packages/machine-api/examples/machine-api.toml',
        '--bind',
        address,
        '--data-dir',
        dataDirs.machineApi,
      ],
    ];
  }
  const appUrl = `http://${address}/`;
  return [
    'packages/forge/bin/forge.js',
    ['serve', '--bind', address, '--data-dir', dataDirs.forge, '--app-url', appUrl],
  ];
}

const readyPath: Record<ServiceName, string> = { machineApi: '/ping', forge: '/api/v1/version' };

export interface StartedService {
  /** host:port, in place of the service's default address. */
  address: string;
  stop(): Promise<void>;
}

/** Starts a built service (`npm run build`) in the checkout at `root`, as `npm start` would. */
export async function startService(root: string, name: ServiceName): Promise<StartedService> {
  const address = `127.0.0.1:${await freePort()}`;
  const [command, args] = commandLine(name, address);
  // The #! lines name `node`: the one running this process comes first on their PATH (as in npm start).
  const path = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  const child = spawn(join(root, command), args, {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PATH: path, LOG_LEVEL: 'warn' },
  });
  const stop = () => stopChild(child);
  try {
    await waitForHttp(`http://${address}${readyPath[name]}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { address, stop };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
