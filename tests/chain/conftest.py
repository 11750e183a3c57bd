import pytest

from quill.chain.service import ChainService


@pytest.fixture
def chain(tmp_path):
    service = ChainService("regtest", str(tmp_path / "regtest")).start()
    yield service
    service.close()
