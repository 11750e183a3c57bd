import pytest

from tests.wallet_e2e.e2ekit import Net


@pytest.fixture(scope="module", params=["built-in", "follower"])
def net(request, tmp_path_factory):
    """One chain set-up per module and mode, shared by the module's scenarios
    (each scenario makes its own wallet with its own seed)."""
    n = Net(request.param, tmp_path_factory)
    yield n
    n.close()
