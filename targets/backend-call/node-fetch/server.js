'use strict';
// The backend-call suite's Node front end: node:http server, one backend call per request.
//
//   node server.js PORT BACKEND_URL [agent|fetch]
//
// agent (the default): http.request through one keep-alive http.Agent. fetch: the global fetch
// (undici inside Node), its global dispatcher replaced by an undici Agent of the same bound
// (the undici package, pinned in package.json, is only there for that: Node does not export
// its bundled undici's Agent). README.md says why agent is the default. Both keep at most
// BACKEND_CONNS backend connections; further calls wait for one. Node raises the soft
// RLIMIT_NOFILE to the hard limit by itself at start.
const http = require('node:http');

const usage = 'usage: node server.js PORT BACKEND_URL [agent|fetch]';
const fail = (why) => { console.error(`server.js: ${why}; ${usage}`); process.exit(2); };
const [portArg, backendArg, mode = 'agent', ...rest] = process.argv.slice(2);
if (portArg === undefined || backendArg === undefined || rest.length > 0) fail('expected 2 or 3 arguments');
const port = Number(portArg);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`PORT ${JSON.stringify(portArg)} is not a port number`);
let backend;
try { backend = new URL(backendArg); } catch { fail(`BACKEND_URL ${JSON.stringify(backendArg)} is not a URL`); }
if (backend.protocol !== 'http:') fail(`BACKEND_URL ${JSON.stringify(backendArg)} is not http://`);

// The bound on backend connections (README.md says why this size). Node's
// default maxSockets is Infinity (one connection per call in flight: 2 x 10,000 fds at 10,000
// clients) and its default maxFreeSockets (256) would close pooled connections beyond 256
// idle ones, Go's MaxIdleConnsPerHost problem in another size: both are BACKEND_CONNS here.
const BACKEND_CONNS = 1024;
const agent = new http.Agent({ keepAlive: true, maxSockets: BACKEND_CONNS, maxFreeSockets: BACKEND_CONNS });

// Each client calls back with (err, status, requestId, body).
const clients = {
  agent(query, id, done) {
    const headers = id === undefined ? {} : { 'x-request-id': id };
    const req = http.request({
      agent, host: backend.hostname, port: backend.port, method: 'GET',
      path: '/hello' + query, headers,
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => done(null, res.statusCode, res.headers['x-request-id'], Buffer.concat(chunks)));
      res.on('error', done);
    });
    req.on('error', done);
    req.end();
  },
  fetch(query, id, done) {
    const headers = id === undefined ? {} : { 'x-request-id': id };
    fetch(`${backend.origin}/hello${query}`, { headers })
      .then(async (res) => done(null, res.status, res.headers.get('x-request-id') ?? undefined,
        Buffer.from(await res.arrayBuffer())))
      .catch(done);
  },
};
const call = clients[mode];
if (call === undefined) fail(`client ${JSON.stringify(mode)} is not agent or fetch`);
if (mode === 'fetch') {
  let undici;
  try { undici = require('undici'); } catch { fail('the undici package is missing: run `npm ci` next to server.js'); }
  // undici's default Agent opens a connection per request in flight (connections: null).
  undici.setGlobalDispatcher(new undici.Agent({ connections: BACKEND_CONNS }));
}

const server = http.createServer((req, res) => {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (req.method !== 'GET' || path !== '/') {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    return;
  }
  const id = req.headers['x-request-id'];
  call(q < 0 ? '' : req.url.slice(q), id, (err, status, echoed, body) => {
    if (err || status !== 200) {
      res.writeHead(502, { 'Content-Type': 'text/plain' })
        .end(`backend: ${err ? err.message : `answered ${status}`}\n`);
      return;
    }
    const headers = { 'Content-Type': 'text/plain', 'Content-Length': body.length };
    if (echoed !== undefined) headers['X-Request-Id'] = echoed;
    res.writeHead(200, headers).end(body);
  });
});
// 10,000 clients connecting at once: the listen backlog is capped by somaxconn anyway.
server.listen({ host: '127.0.0.1', port, backlog: 65535 }, () => {
  console.log(`listening on 127.0.0.1:${server.address().port} (client: ${mode})`);
});
server.on('error', (e) => { console.error(`server.js: cannot listen on 127.0.0.1:${port}: ${e.message}`); process.exit(2); });
process.on('SIGTERM', () => process.exit(0));
