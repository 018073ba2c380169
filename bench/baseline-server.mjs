// Bare node:http server answering every request with the bytes it was given: the benchmark baseline.
// argv: port, status, content-type, base64 body. The request body is read whole before answering,
// so uploads cost the baseline what they cost the service.
import { createServer } from 'node:http';

const [port, status, contentType, bodyBase64] = process.argv.slice(2);
const body = Buffer.from(bodyBase64, 'base64');
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(Number(status), { 'content-type': contentType, 'content-length': body.length });
    res.end(body);
  });
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
