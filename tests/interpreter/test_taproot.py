"""BIP341 key/script path and BIP342 tapscript rules, with real signatures."""
import pytest

from quill.tx.hashes import hash160
from quill.tx.script_error import ScriptError as E
from quill.tx.script_flags import (
    SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS,
    SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE,
    SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION,
    SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM,
    SCRIPT_VERIFY_TAPROOT,
    STANDARD_SCRIPT_VERIFY_FLAGS,
)
from quill.tx.transaction import Transaction, TxOut
from quill.tx.verify import verify_transaction
from tests.interpreter.spend import schnorr_sig, secret, spending_tx, tap_leaf, verify, xonly
from tests.kit.vectors import load_json

STD = STANDARD_SCRIPT_VERIFY_FLAGS
CONSENSUS_ONLY = STD & ~(SCRIPT_VERIFY_DISCOURAGE_OP_SUCCESS
                         | SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_PUBKEYTYPE
                         | SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_TAPROOT_VERSION
                         | SCRIPT_VERIFY_DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM)
K1, K2, K3 = secret(11), secret(12), secret(13)
AMOUNT = 50_000


def push(b):
    return bytes((len(b),)) + b


def checksig_script(sec):
    return push(xonly(sec)) + b"\xac"


def script_spend(script, make_items, annex=None, leaf_version=0xC0, n_outputs=1):
    """Spend a one-leaf tree holding `script`; make_items(tx, spent, leaf) gives the
    stack items below the script. Returns (tx, spent output)."""
    spk, control, leaf = tap_leaf(script, leaf_version)
    spent = TxOut(AMOUNT, spk)
    tx = spending_tx(n_outputs=n_outputs)
    items = make_items(tx, [spent], leaf)
    tx.vin[0].witness = items + [script, control] + ([annex] if annex else [])
    return tx, spent


def signed_by(sec, hash_type=0, annex=None, codesep_pos=0xFFFFFFFF):
    return lambda tx, spent, leaf: [schnorr_sig(sec, tx, spent, hash_type, annex, leaf,
                                                codesep_pos)]


# -- BIP341 wallet vectors: key path spends ---------------------------------------

def _wallet_tx():
    v = load_json("core/bip341_wallet_vectors.json")["keyPathSpending"][0]
    tx = Transaction.from_hex(v["auxiliary"]["fullySignedTx"])
    spent = [TxOut(u["amountSats"], bytes.fromhex(u["scriptPubKey"]))
             for u in v["given"]["utxosSpent"]]
    return tx, spent, [i["given"]["txinIndex"] for i in v["inputSpending"]]


def test_bip341_fully_signed_tx_verifies_every_input():
    tx, spent, taproot_inputs = _wallet_tx()
    assert len(taproot_inputs) == 7
    assert verify_transaction(tx, spent, STD) == [(True, E.OK)] * len(tx.vin)


@pytest.mark.parametrize("pos", [0, 40, 63])
def test_bip341_key_path_with_a_changed_signature_byte_fails(pos):
    tx, spent, taproot_inputs = _wallet_tx()
    for i in taproot_inputs:
        sig = bytearray(tx.vin[i].witness[0])
        sig[pos] ^= 1
        tx.vin[i].witness = [bytes(sig)]
        results = verify_transaction(tx, spent, STD)
        assert results[i] == (False, E.SCHNORR_SIG)
        tx, spent, _ = _wallet_tx()


def test_key_path_signature_rules():
    tx, spent, taproot_inputs = _wallet_tx()
    i = taproot_inputs[3]        # SIGHASH_DEFAULT: 64-byte signature
    sig = tx.vin[i].witness[0]
    assert len(sig) == 64
    for witness, err in [([sig + b"\x00"], E.SCHNORR_SIG_HASHTYPE),
                         ([sig + b"\x01"], E.SCHNORR_SIG),
                         ([sig + b"\x04"], E.SCHNORR_SIG_HASHTYPE),
                         ([sig[:63]], E.SCHNORR_SIG_SIZE),
                         ([], E.WITNESS_PROGRAM_WITNESS_EMPTY)]:
        tx.vin[i].witness = witness
        assert verify_transaction(tx, spent, STD)[i] == (False, err)
    tx.vin[i].witness = [b""]
    assert verify_transaction(tx, spent, STD)[i] == (False, E.SCHNORR_SIG_SIZE)
    # Without TAPROOT a 32-byte v1 program succeeds outright, even when upgradable
    # witness programs are discouraged (Core returns before that check).
    no_taproot = STD & ~SCRIPT_VERIFY_TAPROOT
    assert verify_transaction(tx, spent, no_taproot)[i] == (True, E.OK)


def test_bip341_control_blocks_commit_to_their_leaves():
    cases = load_json("core/bip341_wallet_vectors.json")["scriptPubKey"]
    checked = 0
    for case in cases:
        leaves = case["given"]["scriptTree"]
        if leaves is None:
            continue
        flat = []
        stack = [leaves]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
            else:
                flat.append(node)
        flat.sort(key=lambda leaf: leaf["id"])
        spk = bytes.fromhex(case["expected"]["scriptPubKey"])
        for leaf, control_hex in zip(flat, case["expected"]["scriptPathControlBlocks"], strict=True):
            control = bytes.fromhex(control_hex)
            script = bytes.fromhex(leaf["script"])
            tx = spending_tx(witness=[script, control])
            ok, err = verify(tx, TxOut(AMOUNT, spk), STD)
            # The commitment holds; what follows depends on the leaf's script.
            assert err is not E.WITNESS_PROGRAM_MISMATCH
            if leaf["leafVersion"] != 0xC0:
                assert err is E.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION
                assert verify(tx, TxOut(AMOUNT, spk), CONSENSUS_ONLY) == (True, E.OK)
            bad = bytearray(control)
            bad[0] ^= 1                  # claim the other parity
            tx.vin[0].witness = [script, bytes(bad)]
            assert verify(tx, TxOut(AMOUNT, spk), STD) == (False, E.WITNESS_PROGRAM_MISMATCH)
            checked += 1
    assert checked >= 10


# -- script path ------------------------------------------------------------------

def test_checksig_leaf_with_each_hash_type():
    for hash_type in (0, 1, 2, 3, 0x81, 0x82, 0x83):
        tx, spent = script_spend(checksig_script(K1), signed_by(K1, hash_type))
        assert verify(tx, spent, STD) == (True, E.OK), hash_type


def test_checksig_leaf_failures():
    tx, spent = script_spend(checksig_script(K1), signed_by(K2))
    assert verify(tx, spent, STD) == (False, E.SCHNORR_SIG)
    tx, spent = script_spend(checksig_script(K1), lambda *a: [b""])
    assert verify(tx, spent, STD) == (False, E.EVAL_FALSE)
    tx, spent = script_spend(checksig_script(K1), lambda *a: [b"\x01" * 63])
    assert verify(tx, spent, STD) == (False, E.SCHNORR_SIG_SIZE)
    tx, spent = script_spend(checksig_script(K1), lambda t, s, leaf: [schnorr_sig(K1, t, s, 0, None, leaf) + b"\x00"])
    assert verify(tx, spent, STD) == (False, E.SCHNORR_SIG_HASHTYPE)
    # SIGHASH_SINGLE needs an output at the input's index.
    tx, spent = script_spend(checksig_script(K1), lambda *a: [b"\x01" * 64 + b"\x03"], n_outputs=0)
    assert verify(tx, spent, STD) == (False, E.SCHNORR_SIG_HASHTYPE)


def test_checksigadd_two_of_three():
    script = (checksig_script(K1) + push(xonly(K2)) + b"\xba" + push(xonly(K3)) + b"\xba"
              + b"\x52\x9c")      # 2 NUMEQUAL
    def ok(t, s, leaf):
        return [schnorr_sig(K3, t, s, 0, None, leaf), b"", schnorr_sig(K1, t, s, 0, None, leaf)]

    def one(t, s, leaf):
        return [b"", b"", schnorr_sig(K1, t, s, 0, None, leaf)]

    def wrong(t, s, leaf):
        return [schnorr_sig(K1, t, s, 0, None, leaf), b"", schnorr_sig(K1, t, s, 0, None, leaf)]

    tx, spent = script_spend(script, ok)
    assert verify(tx, spent, STD) == (True, E.OK)
    tx, spent = script_spend(script, one)
    assert verify(tx, spent, STD) == (False, E.EVAL_FALSE)
    tx, spent = script_spend(script, wrong)
    assert verify(tx, spent, STD) == (False, E.SCHNORR_SIG)


def test_codeseparator_position_is_signed():
    script = b"\xab" + checksig_script(K1)         # OP_CODESEPARATOR at opcode position 0
    tx, spent = script_spend(script, signed_by(K1, codesep_pos=0))
    assert verify(tx, spent, STD) == (True, E.OK)
    tx, spent = script_spend(script, signed_by(K1))
    assert verify(tx, spent, STD) == (False, E.SCHNORR_SIG)
    script = b"\x61\x61\xab" + checksig_script(K1)  # NOP NOP CODESEPARATOR: position 2
    tx, spent = script_spend(script, signed_by(K1, codesep_pos=2))
    assert verify(tx, spent, STD) == (True, E.OK)


def test_annex_is_signed_and_dropped_from_the_stack():
    annex = b"\x50" + b"annex"
    tx, spent = script_spend(checksig_script(K1), signed_by(K1, annex=annex), annex=annex)
    assert verify(tx, spent, STD) == (True, E.OK)
    tx, spent = script_spend(checksig_script(K1), signed_by(K1), annex=annex)
    assert verify(tx, spent, STD) == (False, E.SCHNORR_SIG)


def test_op_success_makes_any_leaf_valid_unless_discouraged():
    for script in (b"\x50", b"\x62", b"\x6a\x7e", b"\x00\x63\xbb\x68"):
        tx, spent = script_spend(script, lambda *a: [])
        assert verify(tx, spent, CONSENSUS_ONLY) == (True, E.OK), script.hex()
        assert verify(tx, spent, STD) == (False, E.DISCOURAGE_OP_SUCCESS), script.hex()
    # A truncated push before the OP_SUCCESS is caught first.
    tx, spent = script_spend(b"\x4c", lambda *a: [])
    assert verify(tx, spent, CONSENSUS_ONLY) == (False, E.BAD_OPCODE)


def test_unknown_leaf_version():
    tx, spent = script_spend(b"\x00", lambda *a: [], leaf_version=0xC2)
    assert verify(tx, spent, CONSENSUS_ONLY) == (True, E.OK)
    assert verify(tx, spent, STD) == (False, E.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION)


def test_tapscript_pubkey_rules():
    unknown_key = push(b"\x02" * 33) + b"\xac"
    tx, spent = script_spend(unknown_key, lambda *a: [b"\x01"])
    assert verify(tx, spent, CONSENSUS_ONLY) == (True, E.OK)
    assert verify(tx, spent, STD) == (False, E.DISCOURAGE_UPGRADABLE_PUBKEYTYPE)
    tx, spent = script_spend(b"\x00\xac", lambda *a: [b""])
    assert verify(tx, spent, CONSENSUS_ONLY) == (False, E.TAPSCRIPT_EMPTY_PUBKEY)


def test_tapscript_consensus_restrictions():
    tx, spent = script_spend(b"\x00\x00\x00\xae", lambda *a: [])
    assert verify(tx, spent, CONSENSUS_ONLY) == (False, E.TAPSCRIPT_CHECKMULTISIG)
    tx, spent = script_spend(b"\x63\x51\x68", lambda *a: [b"\x02"])       # IF 1 ENDIF
    assert verify(tx, spent, CONSENSUS_ONLY) == (False, E.TAPSCRIPT_MINIMALIF)
    tx, spent = script_spend(b"\x63\x51\x68", lambda *a: [b"\x01"])
    assert verify(tx, spent, CONSENSUS_ONLY) == (True, E.OK)
    # 1001 initial items exceed the stack limit before anything runs.
    tx, spent = script_spend(b"\x51", lambda *a: [b""] * 1001)
    assert verify(tx, spent, CONSENSUS_ONLY) == (False, E.STACK_SIZE)
    # No 201-opcode or 10000-byte limits in tapscript.
    tx, spent = script_spend(b"\x61" * 10001 + b"\x51", lambda *a: [])
    assert verify(tx, spent, CONSENSUS_ONLY) == (True, E.OK)


def test_validation_weight_budget():
    # Each non-empty signature costs 50 against (witness size + 50).
    script = (b"\x76" + push(b"\x02" * 33) + b"\xad") * 20   # (DUP <key> CHECKSIGVERIFY) x 20
    tx, spent = script_spend(script, lambda *a: [b"\x01"])
    assert verify(tx, spent, CONSENSUS_ONLY) == (False, E.TAPSCRIPT_VALIDATION_WEIGHT)
    # An annex pays for it: it counts towards the witness size.
    tx, spent = script_spend(script, lambda *a: [b"\x01"], annex=b"\x50" + bytes(400))
    assert verify(tx, spent, CONSENSUS_ONLY) == (True, E.OK)


def test_control_block_sizes():
    for size in (32, 34, 33 + 32 * 129):
        tx, spent = script_spend(b"\x51", lambda *a: [])
        tx.vin[0].witness[-1] = tx.vin[0].witness[-1][:size].ljust(size, b"\x00")
        assert verify(tx, spent, STD) == (False, E.TAPROOT_WRONG_CONTROL_SIZE), size


def test_two_leaf_tree_path():
    from quill.tx.interpreter import tapleaf_hash
    from quillfw.crypto import schnorr
    from quillfw.crypto.hashes import tagged_hash
    a, b = checksig_script(K1), b"\x51"
    ha, hb = tapleaf_hash(0xC0, a), tapleaf_hash(0xC0, b)
    root = tagged_hash("TapBranch", min(ha, hb) + max(ha, hb))
    internal = xonly(secret(7))
    odd, out = schnorr.taproot_tweak_pubkey(internal, root)
    spent = TxOut(AMOUNT, b"\x51\x20" + out)
    tx = spending_tx(witness=[b, bytes((0xC0 | odd,)) + internal + ha])
    assert verify(tx, spent, STD) == (True, E.OK)
    tx.vin[0].witness = [b, bytes((0xC0 | odd,)) + internal + hb]
    assert verify(tx, spent, STD) == (False, E.WITNESS_PROGRAM_MISMATCH)


def test_p2sh_wrapped_v1_program_is_not_taproot():
    program = b"\x51\x20" + b"\x01" * 32
    spk = b"\xa9\x14" + hash160(program) + b"\x87"
    tx = spending_tx(script_sig=push(program))
    assert verify(tx, TxOut(AMOUNT, spk), CONSENSUS_ONLY) == (True, E.OK)
    assert verify(tx, TxOut(AMOUNT, spk), STD) == (False, E.DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM)


def test_pay_to_anchor_is_not_discouraged():
    tx = spending_tx()
    assert verify(tx, TxOut(0, b"\x51\x02\x4e\x73"), STD) == (True, E.OK)
