// GET /doc/{id}: the JSON document of that id, read by primary key from PostgreSQL through
// node-postgres's pool, pg.Pool({ max: POOL }). One process, one event loop.
//
//   node server.js PORT PGHOST PGPORT POOL
'use strict';
const http = require('http');
const { Pool } = require('pg');

const usage = 'usage: node server.js PORT PGHOST PGPORT POOL (PORT 0-65535, PGPORT 1-65535, POOL 1-1000)';
const args = process.argv.slice(2);
const num = (s, lo, hi) => (/^[0-9]{1,7}$/.test(s) && +s >= lo && +s <= hi ? +s : null);
const [port, pghost, pgport, size] = [num(args[0], 0, 65535), args[1], num(args[2], 1, 65535), num(args[3], 1, 1000)];
if (args.length !== 4 || port === null || !pghost || pgport === null || size === null) {
  console.error(usage);
  process.exit(2);
}

const pool = new Pool({ host: pghost, port: pgport, user: 'postgres', database: 'postgres', max: size });
// An idle client whose backend went away: logged, and the pool makes a new one when asked.
// Without a listener, the 'error' event would end the process.
pool.on('error', (err) => console.error(`idle client: ${err.message}`));

const DOC = /^\/doc\/([0-9]{1,10})$/;
const MAX_ID = 2147483647; // the column is int4

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const path = req.url.split('?', 1)[0];
  if (req.method !== 'GET' || !path.startsWith('/doc/')) {
    return send(res, 404, 'text/plain', 'not found\n');
  }
  const m = DOC.exec(path);
  if (!m || +m[1] > MAX_ID) {
    return send(res, 400, 'text/plain', 'bad id: want a number\n');
  }
  // A named statement: parsed once per connection, as JDBC and pgx do.
  pool.query({ name: 'doc', text: 'SELECT body::text AS body FROM docs WHERE id = $1', values: [+m[1]] })
    .then((r) => {
      if (r.rows.length === 0) send(res, 404, 'text/plain', 'no such document\n');
      else send(res, 200, 'application/json', r.rows[0].body);
    })
    .catch((err) => {
      console.error(`doc ${m[1]}: ${err.message}`);
      if (!res.headersSent) send(res, 503, 'text/plain', 'database error\n');
    });
});

pool.query('SELECT 1').then(
  () => server.listen(port, '127.0.0.1', () => {
    console.log(`listening on 127.0.0.1:${server.address().port} (pool ${size})`);
  }),
  (err) => {
    console.error(`node-pg: cannot reach PostgreSQL at ${pghost}:${pgport}: ${err.message} (is it running?)`);
    process.exit(2);
  });
server.on('error', (err) => {
  console.error(`node-pg: ${err.message}`);
  process.exit(2);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
