"""The Core harness itself: it starts a real bitcoind and reads its answers exactly."""
from decimal import Decimal

from tests.kit.bitcoind import BitcoinD, CoreRPCError


def test_bitcoind_starts_answers_and_reports_errors_as_core_sends_them(tmp_path):
    with BitcoinD(tmp_path / "core") as core:
        assert core.rpc("getblockcount") == 0
        info = core.rpc("getblockchaininfo")
        assert info["chain"] == "regtest"
        assert isinstance(info["difficulty"], Decimal)
        try:
            core.rpc("getblockhash", 5)
        except CoreRPCError as e:
            assert (e.code, e.message) == (-8, "Block height out of range")
        else:
            raise AssertionError("getblockhash beyond the tip must fail")
