#!/usr/bin/env node
// Starts both services with embedded defaults; Ctrl-C stops both (each finishes in-flight requests).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';

mkdirSync('data', { recursive: true });

const services = [
  {
    name: 'machine-api',
    args: [
      'packages/machine-api/dist/cli.js',
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
    args: ['packages/forge/dist/cli.js', 'serve', '--bind', '127.0.0.1:3000', '--data-dir', 'data'],
  },
];

const children = services.map(({ name, args }) => {
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
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
