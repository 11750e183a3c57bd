import pytest

from tests.kit.rpc_daemon import QuillDaemon


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    """One regtest quilld with cookie auth for a whole test module."""
    with QuillDaemon(tmp_path_factory.mktemp("quilld")) as d:
        yield d
