"""go-tcp's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    # A silent client holds the sequential listener for the 1 s head deadline, no longer.
    srv.run.check("silent client dropped at the 1 s deadline", contract.head_deadline, srv)
