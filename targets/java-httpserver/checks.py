"""java-httpserver's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    # A client stuck mid-head blocks the single dispatcher thread (the pool target
    # does not block). Reported, not failed.
    print("note another client while one is stuck mid-head:", contract.stuck_clients(srv, 1, timeout=1), flush=True)
