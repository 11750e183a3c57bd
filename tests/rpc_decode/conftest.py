import sys
from pathlib import Path

import pytest

# The golden-case helpers live with the codec tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tx"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rpc_harness import InProcessServer  # noqa: E402


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
