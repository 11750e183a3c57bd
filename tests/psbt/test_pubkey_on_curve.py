"""A PSBT's compressed keys are checked by the Jacobi symbol of x^3 + 7 (quill.tx.curve_point), not
by libsecp256k1's parse, which Core uses (CPubKey::IsFullyValid): both must accept the same keys.
Beside Core, decodepsbt of a PSBT whose BIP32 key is off the curve must fail as Core's does."""
from __future__ import annotations

import base64
import random
from typing import Any

from coincurve import PrivateKey, PublicKey

from quill.tx.curve_point import is_valid_compressed_pubkey
from quill.tx.psbt import PSBT, KeyOrigin, PSBTInput, PSBTOutput, encode_base64_psbt, is_fully_valid_pubkey
from quill.tx.transaction import TxOut
from quillfw.crypto.secp256k1 import P
from tests.psbt.test_psbt_vs_core import answer, nodes  # noqa: F401 - the fixture, shared


def libsecp_parses(key: bytes) -> bool:
    try:
        PublicKey(key)
    except (ValueError, TypeError):
        return False
    return True


def edge_xs() -> list[int]:
    rng = random.Random(28)
    xs = [0, 1, 2, 3, 7, P - 1, P, P + 1, 2 ** 256 - 1, P - 7]
    xs += [rng.randrange(2 ** 256) for _ in range(3000)]
    xs += [rng.randrange(P - 2 ** 40, 2 ** 256) for _ in range(200)]   # around and above p
    return xs


def test_the_jacobi_check_accepts_exactly_what_libsecp256k1_parses() -> None:
    accepted = rejected = 0
    for x in edge_xs():
        for header in (2, 3):
            key = bytes([header]) + x.to_bytes(32, "big")
            expected = libsecp_parses(key)
            assert is_valid_compressed_pubkey(key) == expected, key.hex()
            assert is_fully_valid_pubkey(key) == expected, key.hex()
            accepted += expected
            rejected += not expected
    assert accepted > 2000 and rejected > 2000   # about half of all x are on the curve


def test_real_keys_are_valid_and_wrong_lengths_are_not() -> None:
    for i in range(1, 50):
        key = PrivateKey(i.to_bytes(32, "big")).public_key
        assert is_fully_valid_pubkey(key.format())
        assert is_fully_valid_pubkey(key.format(compressed=False))   # 65 bytes: libsecp256k1's parse
        assert not is_valid_compressed_pubkey(key.format()[:32])
        assert not is_valid_compressed_pubkey(key.format(compressed=False))
        assert not is_valid_compressed_pubkey(b"\x04" + key.format()[1:])


def psbt_with_bip32_key(key: bytes) -> str:
    psbt = PSBT(version=None, tx_version=2, fallback_locktime=0)
    txin = PSBTInput(0, bytes(range(32)), 1, 0xFFFFFFFD)
    txin.witness_utxo = TxOut(100_000, b"\x00\x14" + bytes(20))
    txin.hd_keypaths[key] = KeyOrigin(b"\x01\x02\x03\x04", (0x80000054, 0x80000001, 0x80000000, 0, 1))
    psbt.inputs.append(txin)
    psbt.outputs.append(PSBTOutput(0, 50_000, b"\x00\x14" + b"\x01" * 20))
    return encode_base64_psbt(psbt)


def test_decodepsbt_of_keys_on_and_off_the_curve_equals_core(nodes: Any) -> None:  # noqa: F811
    core, quill = nodes
    rng = random.Random(5)
    keys = [PrivateKey(rng.randbytes(32)).public_key.format() for _ in range(4)]
    xs = [P - 1, P, 2 ** 256 - 1, 0] + [rng.randrange(2 ** 256) for _ in range(8)]
    keys += [bytes([2 + i % 2]) + x.to_bytes(32, "big") for i, x in enumerate(xs)]
    outcomes = set()
    for key in keys:
        text = psbt_with_bip32_key(key)
        # a valid key's PSBT written by Quill (valid or not) is read by both, byte for byte
        assert base64.b64decode(text).count(key) == 1
        for method in ("decodepsbt", "analyzepsbt"):
            expected = answer(core, method, text)
            assert answer(quill, method, text) == expected, (method, key.hex())
            outcomes.add(expected[0])
    assert outcomes == {"ok", "error"}
