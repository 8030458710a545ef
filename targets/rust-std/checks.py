"""rust-std's own checks, run by targets/contract.py."""
import subprocess

import contract


def extra(srv):
    # A silent and a dribbling client hold the server for at most the 1 s head deadline.
    srv.run.check("silent and dribbling clients are cut off by the head deadline",
                  contract.head_deadline, srv, dribble=True, low=0.0, high=3.5)


def after(run):
    def no_args():
        r = subprocess.run([f"{run.out}/server"], capture_output=True, timeout=10)
        contract.need(r.returncode != 0, "exit 0 without arguments")
    run.check("no arguments is refused", no_args)
