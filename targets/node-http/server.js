// Fox avatar redirector on Node's built-in http and http2 modules, both on one
// port: /<rrggbb>.svg draws the fox in that colour, /random.svg is a 302 to a
// random colour, and every other request is a 302 to one of N fox avatars.
// usage: node server.js PORT N [TEMPLATE]   (TEMPLATE's {n} becomes 1..=N)
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const http2 = require('node:http2');
const net = require('node:net');
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

// One handler for both: http2's compatibility API (Http2ServerRequest and
// Http2ServerResponse) has the same url, writeHead() and end() as http's.
function handle(req, res) {
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
}

// http2.createServer speaks only h2c (HTTP/2 over TCP with prior knowledge),
// and its allowHTTP1 needs TLS (ALPN). So a net server reads the first bytes of
// each connection and hands the socket, with those bytes put back, to the http
// or the http2 server through the 'connection' event both document for this:
// the HTTP/2 connection preface means h2c, anything else HTTP/1. The Upgrade:
// h2c dance is not done; such a request is answered over HTTP/1.1.
const h1 = http.createServer(handle);
const h2 = http2.createServer(handle);
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

function sniff(socket) {
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const n = Math.min(head.length, PREFACE.length);
    const h2c = head.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (h2c && head.length < PREFACE.length) return; // a piece of the preface: wait
    socket.removeListener('data', onData);
    socket.removeListener('error', onError);
    // Paused, so the bytes put back wait for the new owner's reader.
    socket.pause();
    socket.unshift(head);
    (h2c ? h2 : h1).emit('connection', socket);
    if (!h2c) socket.resume(); // http reads through 'data'; http2 takes the handle itself
  };
  // A reset before the first bytes: nothing to answer, and no crash.
  const onError = () => socket.destroy();
  socket.on('data', onData);
  socket.on('error', onError);
}

// Node's default backlog is 511; thousands of clients connecting at once
// would see dropped SYNs and retry a second or more later.
const server = net.createServer(sniff);
server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => {
  console.log(`listening on 127.0.0.1:${server.address().port}`);
});

// Unhandled, SIGTERM kills Node by the signal; there is nothing to flush, so
// exit 0 at once rather than wait for keep-alive connections to go idle.
process.on('SIGTERM', () => process.exit(0));
