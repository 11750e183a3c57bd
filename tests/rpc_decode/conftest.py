import pytest

from tests.rpc_decode.rpc_harness import InProcessServer


@pytest.fixture(scope="module")
def servers():
    """Real RPC servers per network: main, regtest, and main with -deprecatedrpc=addresses."""
    started = {}
    try:
        for key, chain, deprecated in (("main", "main", ()), ("regtest", "regtest", ()),
                                       ("deprecated", "main", ("addresses",))):
            started[key] = InProcessServer(chain, deprecated).start()
        yield started
    finally:
        for s in started.values():
            s.stop()
