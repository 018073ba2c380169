// Bare node:http server answering every request with the bytes it was given: the benchmark baseline.
// argv: port, status, content-type, file holding the body (an argv has a size limit; a heatmap does not). The request body is read whole before answering,
// so uploads cost the baseline what they cost the service.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, status, contentType, bodyFile] = process.argv.slice(2);
const body = readFileSync(bodyFile);
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(Number(status), { 'content-type': contentType, 'content-length': body.length });
    res.end(body);
  });
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
