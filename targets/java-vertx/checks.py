"""java-vertx's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    contract.many_connections(srv, 2000)
