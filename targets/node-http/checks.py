"""node-http's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    contract.syntax(srv.run, ["node", "--check", "server.js"])
    srv.run.check("SVG routes: avatar's fox in any colour, /random.svg, 404 otherwise", contract.svg_routes, srv)
    contract.many_connections(srv, 2000)
