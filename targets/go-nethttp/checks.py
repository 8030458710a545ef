"""go-nethttp's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    srv.run.check("SVG routes: avatar's fox in any colour, /random.svg, 404 otherwise", contract.svg_routes, srv)
