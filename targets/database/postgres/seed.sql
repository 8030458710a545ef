-- The database suite's data, loaded by run.sh in single-user mode (postgres --single -j:
-- each statement ends with a semicolon and an empty line). 10,000 JSON documents of about
-- 2 KB each, shaped like the CouchDB documents of "The art of benchmarking" (an _id, a
-- _rev, a few fields and a body of text), the same bytes on every run: every value comes
-- from the id through md5, nothing from random() or the clock.
CREATE TABLE docs (id int PRIMARY KEY, body jsonb NOT NULL);

INSERT INTO docs (id, body)
SELECT i, jsonb_build_object(
    '_id', format('doc-%s', i),
    '_rev', '1-' || md5('rev' || i),
    'type', 'article',
    'title', format('Document %s', i),
    'author', jsonb_build_object('name', format('author-%s', i % 97), 'email', format('author-%s@example.org', i % 97)),
    'tags', jsonb_build_array(format('tag-%s', i % 13), format('tag-%s', i % 17), format('tag-%s', i % 31)),
    'created', to_char(timestamp '2026-01-01' + i * interval '17 minutes', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'views', (i * 7919) % 100000,
    'body', (SELECT string_agg(md5(i || '-' || j), ' ' ORDER BY j) FROM generate_series(1, 55) AS j))
FROM generate_series(1, 10000) AS i;

VACUUM ANALYZE docs;

