// Fox avatar redirector on Node's built-in http module; /<rrggbb>.svg draws the
// fox in that colour, and /random.svg is a 302 to a random colour.
// usage: node server.js PORT N [TEMPLATE]   (TEMPLATE's {n} becomes 1..=N)
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const [portArg, nArg, template = 'https://avatar.example/Renard-{n}.png'] = process.argv.slice(2);
const port = Number(portArg);
const n = Number(nArg);
if (!Number.isInteger(port) || port < 0 || port > 65535 || !Number.isInteger(n) || n < 1 || n > 65535) {
  console.error('usage: node server.js PORT N [TEMPLATE]   (N in 1..=65535)');
  process.exit(2);
}
// The number is the glue between the pieces, however many {n} there are.
const pieces = template.split('{n}');

// The fox of crates/avatar/assets/fox.svg, read and split at its {{color}}
// placeholders once: a body is then one join.
const fox = fs.readFileSync(path.join(__dirname, 'fox.svg'), 'utf8').split('{{color}}');
// Exactly /rrggbb.svg, any case, as avatar takes it (the query is not part of it).
const svgPath = /^\/([0-9a-fA-F]{6})\.svg$/;

function svg(req, res, route) {
  if (route === '/random.svg') {
    const color = Math.floor(Math.random() * 0x1000000).toString(16).padStart(6, '0');
    res.writeHead(302, { Location: `/${color}.svg`, 'Content-Length': 0 });
    res.end();
    return;
  }
  const m = svgPath.exec(route);
  if (m === null) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 10 });
    res.end('not found\n');
    return;
  }
  const body = fox.join(`#${m[1].toLowerCase()}`);
  res.writeHead(200, {
    'Content-Type': 'image/svg+xml; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const route = q === -1 ? req.url : req.url.slice(0, q);
  if (route.endsWith('.svg')) {
    svg(req, res, route);
    return;
  }
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
