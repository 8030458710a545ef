"""python-asyncio's own checks, run by targets/contract.py."""
import contract


def extra(srv):
    contract.syntax(srv.run, ["python3", "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])",
                              "server.py"])
    contract.many_connections(srv, 2000)
