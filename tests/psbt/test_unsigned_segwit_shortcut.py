"""psbt_signer answers "not signed and verified" for an unsigned segwit input without running the
interpreter (analyzepsbt's and the signer's first check). The answer must be the interpreter's: an
empty witness fails every version 0 program and a taproot output, and the shortcut must leave the
other scripts (pay-to-anchor, future versions, bare scripts) to the interpreter."""
from __future__ import annotations

import pytest

from quill.signing import psbt_signer as P
from quill.tx.interpreter import verify_script
from quill.tx.psbt import PSBT, PSBTInput, PSBTOutput
from quill.tx.script_flags import STANDARD_SCRIPT_VERIFY_FLAGS
from quill.tx.transaction import TxOut

SCRIPTS = {
    "p2wpkh": b"\x00\x14" + bytes(range(1, 21)),
    "p2wpkh, zero program": b"\x00\x14" + bytes(20),
    "p2wsh": b"\x00\x20" + bytes(range(32)),
    "v0, wrong length": b"\x00\x19" + bytes(range(25)),
    "p2tr": b"\x51\x20" + bytes(range(1, 33)),
    "pay to anchor": b"\x51\x02\x4e\x73",
    "v2": b"\x52\x20" + bytes(range(32)),
    "OP_TRUE": b"\x51",
    "p2pkh": b"\x76\xa9\x14" + bytes(20) + b"\x88\xac",
}


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_shortcut_gives_the_interpreters_answer(name: str) -> None:
    script = SCRIPTS[name]
    psbt = PSBT(version=None, tx_version=2, fallback_locktime=0)
    txin = PSBTInput(0, bytes(range(32)), 0, 0xFFFFFFFD)
    txin.witness_utxo = TxOut(50_000, script)
    psbt.inputs.append(txin)
    psbt.outputs.append(PSBTOutput(0, 40_000, b"\x51"))
    ctx = P.finalize_context(psbt)
    assert ctx is not None
    interpreter, _ = verify_script(b"", script, [], STANDARD_SCRIPT_VERIFY_FLAGS, ctx.checker(0, 50_000))
    assert P.input_signed_and_verified(psbt, 0, ctx) == interpreter
    # The shortcut covers exactly the scripts an empty witness cannot satisfy.
    assert P._needs_a_witness(script) == (name in ("p2wpkh", "p2wpkh, zero program", "p2wsh", "v0, wrong length",
                                                   "p2tr"))
    if P._needs_a_witness(script):
        assert not interpreter
