"""node-http's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    contract.syntax(srv.run, ["node", "--check", "server.js"])
    contract.many_connections(srv, 2000)
