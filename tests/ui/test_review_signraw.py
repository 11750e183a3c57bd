"""What the device shows before it signs (issue 26): signrawtransactionwithkey through
quilld -device=emulator -emuscreen=DIR. The review screen's text lists every output
with the address and amount that Bitcoin Core's decoderawtransaction gives for the
same transaction (every output type: P2PKH, P2SH, P2WPKH, P2WSH, P2TR, a future
witness version, OP_RETURN, a bare script), the fee the inputs' amounts leave, and
the warnings (non-final locktime, SIGHASH_NONE|ANYONECANPAY); every screen is a
PNG of the panel's size."""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from quill.tx.transaction import Transaction, TxOut
from tests.kit.bitcoind import BitcoinD
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import keys, multisig, p2pkh, p2sh, p2tr, p2wpkh, p2wsh, prevtx, unsigned_tx
from tests.ui.screenkit import lines, png_size, wait_screens

KEY = keys(2611, 1)[0]
OTHER = keys(2612, 2)


def _outputs() -> list[TxOut]:
    ms = multisig(1, [k.pubkey for k in OTHER])
    scripts = [p2pkh(OTHER[0].pubkey), p2sh(ms), p2wpkh(OTHER[1].pubkey), p2wsh(ms),
               p2tr(OTHER[0].pubkey[1:]), bytes([0x51, 2, 0x4E, 0x73]),      # P2A: witness v1, 2 bytes
               bytes([0x52, 16]) + bytes(range(16)),                           # witness v2
               bytes([0x6A, 5]) + b"hello",                                    # OP_RETURN
               ms]                                                             # bare multisig
    return [TxOut(0 if s[0] == 0x6A else 20_000 + 1111 * i, s) for i, s in enumerate(scripts)]


def _btc(value: Decimal) -> str:
    return f"{value:.8f}"


@pytest.fixture(scope="module")
def screens_node(tmp_path_factory):
    base = tmp_path_factory.mktemp("ui-review")
    with QuillDaemon(base / "quilld", "-device=emulator", "-emudisplay=st7789-240x240",
                     f"-emuscreen={base / 'screens'}") as d:
        yield d, base / "screens"


def _expected(core: BitcoinD, tx: Transaction) -> list[str]:
    decoded = core.rpc("decoderawtransaction", tx.hex())
    n = len(decoded["vout"])
    want = []
    for out in decoded["vout"]:
        spk = out["scriptPubKey"]
        if "address" in spk:
            where = spk["address"]
        elif spk["type"] == "nulldata":
            where = "OP_RETURN " + spk["hex"][4:]
        else:
            where = "Script " + spk["hex"]
        want.append(f"Output {out['n'] + 1} of {n}: {where} {_btc(out['value'])} BTC")
    return want


@pytest.mark.parametrize("sighash, locktime", [(None, 0), ("NONE|ANYONECANPAY", 800_000)])
def test_the_review_lists_every_output_as_core_decodes_it(screens_node, tmp_path: Path,
                                                          sighash: str | None, locktime: int) -> None:
    node, folder = screens_node
    tx = unsigned_tx(2, 0, seed=26, locktime=locktime)
    tx.vout = _outputs()
    amount = (sum(o.value for o in tx.vout) + 1500) // 2        # a 1,500-sat fee (odd sums: 1,501)
    entries = [prevtx(tx, i, p2wpkh(KEY.pubkey), amount) for i in range(2)]
    before = len(wait_screens(folder, "review", 0))
    args = [tx.hex(), [KEY.wif], entries] + ([sighash] if sighash else [])
    result = node.rpc("signrawtransactionwithkey", *args)
    assert result["complete"] is True
    drawn = wait_screens(folder, "review", before + 1)[before:]
    text = lines(drawn[-1])
    with BitcoinD(tmp_path / "core") as core:
        want = _expected(core, tx)
    fee = 2 * amount - sum(o.value for o in tx.vout)
    assert text[0] == "Send bitcoin"
    assert text[1:1 + len(want)] == want
    assert f"Fee: 0.{fee:08d} BTC" in text
    assert not any(line.startswith("Change") for line in text)
    warnings = [line for line in text if line.startswith("Warning")]
    if sighash:
        assert warnings == ["Warning: locktime block 800000: not final until then",
                            "Warning: outputs not committed (sighash 0x82, SIGHASH_NONE|ANYONECANPAY)"]
    else:
        assert warnings == []
    for path in drawn:      # every page of the review, the whole text in each .txt
        assert png_size(path.with_suffix(".png")) == (240, 240)
        assert lines(path) == text


def test_a_review_of_many_outputs_lists_each_of_them(screens_node, tmp_path: Path) -> None:
    """More outputs than a review held in RAM (32): the device reads them back from its
    outputs' file one at a time, and each is listed with Core's address and amount."""
    node, folder = screens_node
    tx = unsigned_tx(2, 0, seed=2626)
    base = _outputs()[:5]       # P2PKH, P2SH, P2WPKH, P2WSH, P2TR, again and again
    tx.vout = [TxOut(10_000 + 7 * i, base[i % len(base)].script_pubkey) for i in range(45)]
    amount = (sum(o.value for o in tx.vout) + 2000) // 2
    entries = [prevtx(tx, i, p2wpkh(KEY.pubkey), amount) for i in range(2)]
    before = len(wait_screens(folder, "review", 0))
    assert node.rpc("signrawtransactionwithkey", tx.hex(), [KEY.wif], entries)["complete"] is True
    drawn = wait_screens(folder, "review", before + 1)[before:]
    text = lines(drawn[-1])
    with BitcoinD(tmp_path / "core") as core:
        want = _expected(core, tx)
    assert len(want) == 45 and text[1:46] == want
    assert not any("not listed" in line for line in text)
    assert f"Fee: 0.{2 * amount - sum(o.value for o in tx.vout):08d} BTC" in text
