#!/usr/bin/env node
// Starts both services with embedded defaults; Ctrl-C stops both (each finishes in-flight requests).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';

mkdirSync('data', { recursive: true });

const services = [
  {
    name: 'machine-api',
    // Run as an executable, so that the V8 flags on its #! line apply (see that file).
    command: 'packages/machine-api/bin/machine-api.js',
    args: [
      'serve',
      '--config',
      'packages/machine-api/examples/machine-api.toml',
      '--bind',
      '127.0.0.1:8080',
      '--data-dir',
      'data/machine-api',
    ],
  },
  {
    name: 'forge',
    command: 'packages/forge/bin/forge.js',
    args: ['serve', '--bind', '127.0.0.1:3000', '--data-dir', 'data'],
  },
];

// The services' #! lines name `node`: the one running this script comes first on their PATH.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };

const children = services.map(({ name, command, args }) => {
  const child = spawn(command, args, { stdio: 'inherit', env });
  child.on('exit', (code, signal) => {
    process.stderr.write(`${name} exited (${signal ?? code})\n`);
    stopAll('SIGTERM');
  });
  return child;
});

let stopping = false;
function stopAll(signal) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill(signal);
}

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stopAll(signal));
process.on('exit', () => stopAll('SIGTERM'));
