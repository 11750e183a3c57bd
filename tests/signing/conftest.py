"""Fixtures of the signing tests: a quilld with an emulated device per test module."""
import pytest

from tests.kit import boards
from tests.kit.rpc_daemon import QuillDaemon


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """One regtest quilld with an emulated device per test module, modelling the smallest
    board (the pyboard: 97K, its firmware frozen)."""
    with QuillDaemon(tmp_path_factory.mktemp("regtest"), "-device=emulator",
                     f"-emuboard={boards.ready(boards.SMALLEST_BOARD)}", "-debug=1") as d:
        yield d


@pytest.fixture(scope="module")
def main_node(tmp_path_factory):
    with QuillDaemon(tmp_path_factory.mktemp("main"), "-device=emulator", f"-emuboard={boards.DEFAULT_BOARD}",
                     chain="main") as d:
        yield d
