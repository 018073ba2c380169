// `node forge-cluster.mjs N <cli> serve --bind HOST:PORT …`: N forge processes sharing one listening port
// through node:cluster (the primary hands connections out round-robin), as the bench's two-process setup.
import cluster from 'node:cluster';
import { once } from 'node:events';

const [count, cli, ...args] = process.argv.slice(2);
cluster.setupPrimary({ exec: cli, args });
const workers = Array.from({ length: Number(count) }, () => cluster.fork());
let stopping = false;
cluster.on('exit', (worker, code) => {
  if (stopping) return;
  process.stderr.write(`forge-cluster: worker ${worker.process.pid} exited with ${code}\n`);
  process.exitCode = 1;
});
process.once('SIGTERM', async () => {
  stopping = true;
  const exits = workers.filter((worker) => !worker.isDead()).map((worker) => once(worker, 'exit'));
  for (const worker of workers) worker.process.kill('SIGTERM');
  await Promise.all(exits);
  process.exit(0);
});
