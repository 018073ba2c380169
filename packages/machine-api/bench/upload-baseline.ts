/**
 * The upload baseline: a bare node:http server that streams each request body to a file on disk with
 * back-pressure (what receiving an upload costs at the least), removes it, and answers 200. argv: port,
 * directory for the files. Sends 'ready' to its parent once listening.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const [port, dir] = process.argv.slice(2);
let next = 0;
createServer((req, res) => {
  const file = join(dir ?? '.', `upload-${next++}`);
  pipeline(req, createWriteStream(file)).then(
    async () => {
      await rm(file, { force: true });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    },
    () => res.writeHead(500).end(),
  );
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
