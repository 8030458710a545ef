"""The backend-call suite's Python front end: an aiohttp server calling the backend with one
aiohttp ClientSession per process.

    python server.py PORT BACKEND_URL

GET /[?query] calls GET BACKEND_URL/hello[?query] once (the query forwarded as it came),
forwarding X-Request-Id, and answers 200 text/plain with the backend's body and its echo;
a backend failure is a 502. SIGTERM: stop accepting, give in-flight requests 1 s, exit.
At most BACKEND_CONNS backend connections (the connector's limit): further calls wait for one.
At start the soft RLIMIT_NOFILE is raised to the hard limit (CPython does not do it itself).
"""
import asyncio
import resource
import signal
import sys

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web
from yarl import URL

USAGE = "usage: python server.py PORT BACKEND_URL (e.g. server.py 8080 http://127.0.0.1:9090)"
# The bound on backend connections (TCPConnector's limit; its default, 100, is too few for a
# 10,000-connection front end, and one connection per call in flight needs 2 x 10,000 fds).
# README.md says why this size.
BACKEND_CONNS = 1024


def raise_nofile():
    """Raises the soft RLIMIT_NOFILE to the hard one, as Go's runtime and the JVM do."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError) as e:
            print(f"server.py: cannot raise the soft RLIMIT_NOFILE to {hard}: {e}", file=sys.stderr)


def parse_args(argv):
    if len(argv) != 2:
        raise ValueError(f"expected 2 arguments, got {len(argv)}")
    try:
        port = int(argv[0])
        assert 0 <= port <= 65535
    except (ValueError, AssertionError):
        raise ValueError(f"PORT {argv[0]!r} is not a port number") from None
    backend = URL(argv[1])
    if backend.scheme != "http" or not backend.host:
        raise ValueError(f"BACKEND_URL {argv[1]!r} is not an http:// URL")
    return port, argv[1].rstrip("/")


def make_app(backend):
    async def on_startup(app):
        connector = TCPConnector(limit=BACKEND_CONNS, limit_per_host=BACKEND_CONNS, keepalive_timeout=60)
        app["session"] = ClientSession(connector=connector, timeout=ClientTimeout(total=60))

    async def on_cleanup(app):
        await app["session"].close()

    async def front(request):
        raw_query = request.raw_path.partition("?")[2]
        url = URL(f"{backend}/hello?{raw_query}" if raw_query else f"{backend}/hello", encoded=True)
        rid = request.headers.get("X-Request-Id")
        headers = {"X-Request-Id": rid} if rid is not None else {}
        try:
            async with request.app["session"].get(url, headers=headers) as resp:
                body = await resp.read()
                if resp.status != 200:
                    return web.Response(status=502, text=f"backend answered {resp.status}\n")
                echoed = resp.headers.get("X-Request-Id")
        except (ClientError, OSError, asyncio.TimeoutError) as e:
            return web.Response(status=502, text=f"backend: {type(e).__name__}: {e}\n")
        return web.Response(body=body, content_type="text/plain",
                            headers={"X-Request-Id": echoed} if echoed is not None else None)

    app = web.Application()
    app.router.add_get("/", front)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


async def serve(port, backend):
    runner = web.AppRunner(make_app(backend), access_log=None, shutdown_timeout=1.0, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=65535)
    await site.start()
    print(f"listening on 127.0.0.1:{runner.addresses[0][1]}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main():
    try:
        port, backend = parse_args(sys.argv[1:])
    except ValueError as e:
        print(f"server.py: {e}; {USAGE}", file=sys.stderr)
        return 2
    raise_nofile()
    try:
        asyncio.run(serve(port, backend))
    except OSError as e:
        print(f"server.py: cannot listen on 127.0.0.1:{port}: {e}: is the port free?", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
