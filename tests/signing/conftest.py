import pytest

from rpc_daemon import QuillDaemon


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """One regtest quilld with an emulated device (97K heap) per test module."""
    with QuillDaemon(tmp_path_factory.mktemp("regtest"), "-device=emulator", "-debug=1") as d:
        yield d


@pytest.fixture(scope="module")
def main_node(tmp_path_factory):
    with QuillDaemon(tmp_path_factory.mktemp("main"), "-device=emulator", chain="main") as d:
        yield d
