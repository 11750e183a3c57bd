import pytest

from tests.rpc_decode.rpc_harness import InProcessServer


@pytest.fixture(scope="module", params=["in-loop", "workers"])
def servers(request):
    """Real RPC servers per network: main, regtest, and main with -deprecatedrpc=addresses; the
    calls answered on the server's loop, or by its stateless worker processes (issue 28)."""
    workers = 1 if request.param == "workers" else 0
    started = {}
    try:
        for key, chain, deprecated in (("main", "main", ()), ("regtest", "regtest", ()),
                                       ("deprecated", "main", ("addresses",))):
            started[key] = InProcessServer(chain, deprecated, workers).start()
        yield started
    finally:
        for s in started.values():
            s.stop()
