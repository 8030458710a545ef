// Fox avatar redirector on Node's built-in http module.
// usage: node server.js PORT N [TEMPLATE]   (TEMPLATE's {n} becomes 1..=N)
'use strict';

const http = require('node:http');

const [portArg, nArg, template = 'https://avatar.example/Renard-{n}.png'] = process.argv.slice(2);
const port = Number(portArg);
const n = Number(nArg);
if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(n) || n < 1 || n > 65535) {
  console.error('usage: node server.js PORT N [TEMPLATE]   (N in 1..=65535)');
  process.exit(2);
}
// The number is the glue between the pieces, however many {n} there are.
const pieces = template.split('{n}');

const server = http.createServer((req, res) => {
  const pick = 1 + Math.floor(Math.random() * n);
  // Without Content-Length, writeHead() commits to chunked encoding and
  // end() sends a "0" chunk; with it the response is just the head.
  res.writeHead(302, { Location: pieces.join(pick), 'Content-Length': 0 });
  res.end();
});

// Node's default backlog is 511; thousands of clients connecting at once
// would see dropped SYNs and retry a second or more later.
server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => {
  console.log(`listening on 127.0.0.1:${server.address().port}`);
});

// Unhandled, SIGTERM kills Node by the signal; there is nothing to flush, so
// exit 0 at once rather than wait for keep-alive connections to go idle.
process.on('SIGTERM', () => process.exit(0));
