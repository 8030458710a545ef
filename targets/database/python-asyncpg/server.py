#!/usr/bin/env python3
"""GET /doc/{id}: the JSON document of that id, read by primary key from PostgreSQL
through an asyncpg pool of POOL connections, served by aiohttp. One process, one event
loop.

usage: server.py PORT PGHOST PGPORT POOL
"""

import asyncio
import re
import signal
import sys

import asyncpg
from aiohttp import web

USAGE = "usage: server.py PORT PGHOST PGPORT POOL (PORT 0-65535, PGPORT 1-65535, POOL 1-1000)"
ID = re.compile(r"[0-9]{1,10}")
MAX_ID = 2**31 - 1  # the column is int4
QUERY = "SELECT body::text FROM docs WHERE id = $1"  # asyncpg prepares it once per connection


async def doc(request):
    raw = request.match_info["id"]
    if not ID.fullmatch(raw) or int(raw) > MAX_ID:
        return web.Response(status=400, text="bad id: want a number\n")
    try:
        body = await request.app["pool"].fetchval(QUERY, int(raw))
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as e:
        print(f"doc {raw}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return web.Response(status=503, text="database error\n")
    if body is None:
        return web.Response(status=404, text="no such document\n")
    return web.Response(body=body.encode(), content_type="application/json")


def parse(argv):
    def num(s, lo, hi):
        return int(s) if re.fullmatch(r"[0-9]{1,7}", s) and lo <= int(s) <= hi else None

    if len(argv) != 4:
        return None
    port, pgport, pool = num(argv[0], 0, 65535), num(argv[2], 1, 65535), num(argv[3], 1, 1000)
    if None in (port, pgport, pool) or not argv[1]:
        return None
    return port, argv[1], pgport, pool


async def main(port, pghost, pgport, size):
    try:
        # min_size: asyncpg opens that many at start (its default 10, never above POOL).
        pool = await asyncio.wait_for(asyncpg.create_pool(
            host=pghost, port=pgport, user="postgres", database="postgres",
            min_size=min(10, size), max_size=size), 10)
    except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as e:
        print(f"python-asyncpg: cannot reach PostgreSQL at {pghost}:{pgport}: {e or 'timed out'} "
              "(is it running?)", file=sys.stderr)
        return 2
    app = web.Application()
    app["pool"] = pool
    app.router.add_get("/doc/{id}", doc)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=4096)
    try:
        await site.start()
    except OSError as e:
        print(f"python-asyncpg: {e}", file=sys.stderr)
        return 2
    bound = runner.addresses[0][1]
    print(f"listening on 127.0.0.1:{bound} (pool {size})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()
    pool.terminate()
    return 0


if __name__ == "__main__":
    args = parse(sys.argv[1:])
    if args is None:
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(*args)))
