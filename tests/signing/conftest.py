"""Fixtures of the signing tests: a quilld with an emulated device per test module."""
import pytest

from tests.kit.rpc_daemon import QuillDaemon


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """One regtest quilld with an emulated device per test module, at the smallest
    board's heap (97K)."""
    with QuillDaemon(tmp_path_factory.mktemp("regtest"), "-device=emulator", "-emuheap=97K",
                     "-debug=1") as d:
        yield d


@pytest.fixture(scope="module")
def main_node(tmp_path_factory):
    with QuillDaemon(tmp_path_factory.mktemp("main"), "-device=emulator", chain="main") as d:
        yield d
