"""java-netty's own checks, run by targets/contract.py: avatar's SVG routes."""
import contract


def extra(srv):
    srv.run.check("SVG routes: /<rrggbb>.svg is avatar's fox in that colour, /random.svg a 302 to one",
                  contract.svg_routes, srv)
    contract.many_connections(srv, 2000)
