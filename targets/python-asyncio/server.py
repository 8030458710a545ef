#!/usr/bin/env python3
"""Fox avatar redirector on asyncio, standard library only.

usage: server.py PORT N [TEMPLATE]

Every request head gets a 302 to TEMPLATE with {n} replaced by a random
1..=N. HTTP/1.1 keep-alive and pipelining; anything that does not look like
a request line closes the connection.
"""

import asyncio
import random
import re
import signal
import sys

DEFAULT_TEMPLATE = "https://avatar.example/Renard-{n}.png"
MAX_HEAD = 8192  # a longer head is not a browser asking for an avatar
BACKLOG = 4096   # asyncio's default of 100 overflows when thousands connect at once

REQUEST_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ ]+ HTTP/1\.([01])\r\n")
# What the start of an unfinished head may look like: a method so far, or a
# method and a space. Anything else is noise, and waiting for more won't help.
HEAD_START = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]{0,32}(\Z| )")


class Avatar(asyncio.Protocol):
    """A Protocol, not streams: data_received sees every head that arrived in
    one read, so pipelined requests are answered with one write, and there is
    no task or await per request."""

    def __init__(self, n, pieces):
        self.n = n
        self.pieces = pieces
        self.buf = bytearray()
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buf += data
        self.answer()

    # A client that pipelines but doesn't read: stop reading its requests
    # until it drains our answers, so neither side's buffers grow unbounded.
    def pause_writing(self):
        self.transport.pause_reading()

    def resume_writing(self):
        self.transport.resume_reading()

    def answer(self):
        buf, out, close = self.buf, [], False
        start = 0
        while (end := buf.find(b"\r\n\r\n", start)) >= 0:
            head = buf[start:end + 2]
            start = end + 4
            m = REQUEST_LINE.match(head)
            if m is None:
                close = True  # garbage: nothing sensible to answer
                break
            http10 = m.group(1) == b"0"
            keep_alive = not http10
            lower = head.lower()
            if (i := lower.find(b"\r\nconnection:")) >= 0:
                tokens = [t.strip() for t in lower[i + 13:lower.index(b"\r\n", i + 2)].split(b",")]
                if b"close" in tokens:
                    keep_alive = False
                elif b"keep-alive" in tokens:
                    keep_alive = True
            if not keep_alive:
                out.append(self.response(b"Connection: close\r\n"))
                close = True
                break
            out.append(self.response(b"Connection: keep-alive\r\n" if http10 else b""))
        del buf[:start]
        if buf and (len(buf) > MAX_HEAD or not HEAD_START.match(buf)):
            close = True
        if out:
            self.transport.write(b"".join(out))
        if close:
            self.transport.close()  # after the queued responses are flushed

    def response(self, extra):
        location = str(random.randint(1, self.n)).encode().join(self.pieces)
        return b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n%s\r\n" % (location, extra)


async def main(port, n, template):
    pieces = [p.encode() for p in template.split("{n}")]
    loop = asyncio.get_running_loop()
    try:
        server = await loop.create_server(
            lambda: Avatar(n, pieces), "127.0.0.1", port, backlog=BACKLOG)
    except OSError as e:
        sys.exit(f"listen on 127.0.0.1:{port}: {e.strerror}")
    print(f"listening on 127.0.0.1:{server.sockets[0].getsockname()[1]}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()


def parse_args(argv):
    try:
        port, n = int(argv[1]), int(argv[2])
        if not (0 <= port <= 65535 and 1 <= n <= 65535) or len(argv) > 4:
            raise ValueError
    except (IndexError, ValueError):
        sys.exit(f"usage: server.py PORT N [TEMPLATE]   (N in 1..=65535, TEMPLATE default {DEFAULT_TEMPLATE})")
    return port, n, argv[3] if len(argv) > 3 else DEFAULT_TEMPLATE


if __name__ == "__main__":
    asyncio.run(main(*parse_args(sys.argv)))
