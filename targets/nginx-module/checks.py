"""nginx-module's own checks, run by targets/contract.py: uniformity (nginx's checks,
the same as for split_clients), a template that needs quoting in nginx.conf, many
connections, and the response's exact status line."""
import contract

nginx = contract.load_checks("nginx")


def status_line(srv):
    buf = contract.exchange(srv.port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    contract.need(buf.startswith(b"HTTP/1.1 302 Found\r\n"), repr(buf[:200]))


def extra(srv):
    srv.run.check("status line is 'HTTP/1.1 302 Found'", status_line, srv)
    srv.run.check("N=5 is uniform over 50000 requests", nginx.uniform, srv, 50000,
                  rb"https://avatar\.example/Renard-(\d+)\.png")
    contract.many_connections(srv, 2000)


def after(run):
    srv = run.start(21, ['http://x/$a"b\\c/{n}-{n}.png'], name="N=21 with a tricky template starts")
    if srv:
        run.check("N=21: all 21 seen, uniform over 42000 requests", nginx.uniform, srv, 42000,
                  rb'http://x/\$a"b\\c/(\d+)-\1\.png')
        run.check("second instance gone after SIGTERM", contract.sigterm, srv, 1.0, None, False)
