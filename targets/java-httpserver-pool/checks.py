"""java-httpserver-pool's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    # Clients stuck mid-head tie up pool threads; the others keep serving.
    def stuck():
        res = contract.stuck_clients(srv, 20, timeout=2)
        contract.need(res == "served", res)
    srv.run.check("20 clients stuck mid-head do not block another client", stuck)
