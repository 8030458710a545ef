"""nginx's own checks, run by targets/contract.py: how uniform split_clients is."""
import re

import contract

CHI2_P001 = {4: 18.47, 20: 45.31}  # chi-square critical values, p = 0.001


def count_pipelined(srv, total, pattern):
    """TOTAL GETs on one connection, pipelined in batches of 100: {n: count}."""
    seen = {}
    s = contract.connect(srv.port, 10)
    buf, got = b"", 0
    while got < total:
        batch = min(100, total - got)
        s.sendall(contract.GET * batch)
        for _ in range(batch):
            while b"\r\n\r\n" not in buf:
                chunk = s.recv(65536)
                contract.need(chunk, f"closed after {got}")
                buf += chunk
            head, buf = buf.split(b"\r\n\r\n", 1)
            length = int(re.search(rb"(?im)^content-length: *(\d+)", head).group(1))
            while len(buf) < length:
                buf += s.recv(65536)
            buf = buf[length:]
            m = re.search(rb"(?m)^Location: " + pattern + rb"\r?$", head)
            contract.need(m, f"no Location matching {pattern!r} in {head!r}")
            k = int(m.group(1))
            seen[k] = seen.get(k, 0) + 1
            got += 1
    s.close()
    return seen


def uniform(srv, total, pattern):
    seen = count_pipelined(srv, total, pattern)
    n = srv.n
    exp = total / n
    chi2 = sum((seen.get(k, 0) - exp) ** 2 / exp for k in range(1, n + 1))
    dev = max(abs(seen.get(k, 0) / exp - 1) for k in range(1, n + 1))
    res = f"chi2={chi2:.1f} (limit {CHI2_P001[n - 1]}), worst bucket {dev:.1%} off"
    contract.need(sorted(seen) == list(range(1, n + 1)) and chi2 < CHI2_P001[n - 1], f"{contract.fmt(seen)} {res}")
    return res


def extra(srv):
    srv.run.check("N=5 is uniform over 50000 requests", uniform, srv, 50000,
                  rb"https://avatar\.example/Renard-(\d+)\.png")


def after(run):
    # N=21 as in the post, with a template that needs escaping in nginx.conf.
    srv = run.start(21, ['http://x/$a"b\\c/{n}-{n}.png'], name="N=21 with a tricky template starts")
    if srv:
        run.check("N=21: all 21 seen, uniform over 42000 requests", uniform, srv, 42000,
                  rb'http://x/\$a"b\\c/(\d+)-\1\.png')
        run.check("second instance gone after SIGTERM", contract.sigterm, srv, 1.0, None, False)
