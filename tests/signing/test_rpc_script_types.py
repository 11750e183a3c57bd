"""Every script type x every sighash type through quilld -> pyserial -> emulator, checked
byte for byte against a transaction assembled here from references: bitcointx's
signature hashes, Core's ECDSA procedure on libsecp256k1 (RFC 6979, low-R
grinding, low S) and BIP340 with Core's all-zero aux on libsecp256k1. Then the
merging, missing-key, wrong-key and wrong-amount behaviours of Core's signer."""
import pytest

from quill.tx.transaction import Transaction
from tests.signing.signkit import (
    SIGHASH_NAMES,
    SIGHASH_VALUES,
    KeyPair,
    core_ecdsa,
    ecdsa_sighash,
    keys,
    multisig,
    p2pk,
    p2pkh,
    p2sh,
    p2tr,
    p2wpkh,
    p2wsh,
    prevtx,
    push,
    taproot_sighash,
    unsigned_tx,
)

K = keys(2026, 18)
K[1] = KeyPair(K[1].secret, compressed=False)
K[3] = KeyPair(K[3].secret, compressed=False)
ANCHOR = bytes.fromhex("51024e73")
BARE_MS = multisig(2, [K[4].pubkey, K[5].pubkey, K[6].pubkey])
P2SH_MS = multisig(2, [K[7].pubkey, K[8].pubkey, K[9].pubkey])
WSH_MS = multisig(2, [K[13].pubkey, K[14].pubkey])
WSH_PK = p2pk(K[15].pubkey)

# (name, scriptPubKey, redeemScript, witnessScript)
INPUTS = [
    ("p2pk", p2pk(K[0].pubkey), None, None),
    ("p2pk-uncompressed", p2pk(K[1].pubkey), None, None),
    ("p2pkh", p2pkh(K[2].pubkey), None, None),
    ("p2pkh-uncompressed", p2pkh(K[3].pubkey), None, None),
    ("bare-multisig-2of3", BARE_MS, None, None),
    ("p2sh-multisig-2of3", p2sh(P2SH_MS), P2SH_MS, None),
    ("p2sh-p2pkh", p2sh(p2pkh(K[10].pubkey)), p2pkh(K[10].pubkey), None),
    ("p2wpkh", p2wpkh(K[11].pubkey), None, None),
    ("p2sh-p2wpkh", p2sh(p2wpkh(K[12].pubkey)), p2wpkh(K[12].pubkey), None),
    ("p2wsh-multisig-2of2", p2wsh(WSH_MS), None, WSH_MS),
    ("p2sh-p2wsh-p2pk", p2sh(p2wsh(WSH_PK)), None, WSH_PK),
    ("p2tr-untweaked", p2tr(K[16].xonly), None, None),
    ("p2tr-bip86", p2tr(K[17].bip86_output_key()), None, None),
    ("anchor", ANCHOR, None, None),
]
# every key but K[6] and K[8] (multisig: m signatures from the keys given)
WIFS = [k.wif for i, k in enumerate(K) if i not in (6, 8)]


def _amount(i):
    return 100_000 + 7 * i


def _corpus_tx(seed=11, n_outputs=None):
    return unsigned_tx(len(INPUTS), len(INPUTS) if n_outputs is None else n_outputs, seed=seed)


def _prevtxs(tx):
    return [prevtx(tx, i, spk, _amount(i), redeem, witness)
            for i, (_, spk, redeem, witness) in enumerate(INPUTS)]


def expected_signed(tx, hash_type, upto=None):
    """The signed transaction, assembled from the references."""
    out = Transaction.from_bytes(tx.serialize())
    spent = [(_amount(i), spk) for i, (_, spk, _, _) in enumerate(INPUTS)]
    ecdsa_type = hash_type or 1

    def legacy(i, key, code):
        return core_ecdsa(key.secret, ecdsa_sighash(tx, i, code, ecdsa_type), ecdsa_type)

    def v0(i, key, code):
        return core_ecdsa(key.secret, ecdsa_sighash(tx, i, code, ecdsa_type, _amount(i)), ecdsa_type)

    def schnorr(i, secret):
        sig = KeyPair(secret).priv.sign_schnorr(taproot_sighash(tx, i, spent, hash_type), bytes(32))
        return sig + (bytes((hash_type,)) if hash_type else b"")

    v = out.vin
    upto = len(v) if upto is None else upto
    if 0 < upto:
        v[0].script_sig = push(legacy(0, K[0], INPUTS[0][1]))
    if 1 < upto:
        v[1].script_sig = push(legacy(1, K[1], INPUTS[1][1]))
    if 2 < upto:
        v[2].script_sig = push(legacy(2, K[2], INPUTS[2][1])) + push(K[2].pubkey)
    if 3 < upto:
        v[3].script_sig = push(legacy(3, K[3], INPUTS[3][1])) + push(K[3].pubkey)
    if 4 < upto:
        v[4].script_sig = b"\x00" + push(legacy(4, K[4], BARE_MS)) + push(legacy(4, K[5], BARE_MS))
    if 5 < upto:
        v[5].script_sig = (b"\x00" + push(legacy(5, K[7], P2SH_MS)) + push(legacy(5, K[9], P2SH_MS))
                           + push(P2SH_MS))
    if 6 < upto:
        v[6].script_sig = (push(legacy(6, K[10], INPUTS[6][2])) + push(K[10].pubkey)
                           + push(INPUTS[6][2]))
    if 7 < upto:
        v[7].witness = [v0(7, K[11], p2pkh(K[11].pubkey)), K[11].pubkey]
    if 8 < upto:
        v[8].script_sig = push(INPUTS[8][2])
        v[8].witness = [v0(8, K[12], p2pkh(K[12].pubkey)), K[12].pubkey]
    if 9 < upto:
        v[9].witness = [b"", v0(9, K[13], WSH_MS), v0(9, K[14], WSH_MS), WSH_MS]
    if 10 < upto:
        v[10].script_sig = push(p2wsh(WSH_PK))
        v[10].witness = [v0(10, K[15], WSH_PK), WSH_PK]
    if 11 < upto:
        v[11].witness = [schnorr(11, K[16].secret)]
    if 12 < upto:
        v[12].witness = [schnorr(12, K[17].bip86_secret())]
    return out


@pytest.mark.parametrize("sighash", SIGHASH_NAMES)
def test_every_script_type_signs_as_core(node, sighash):
    tx = _corpus_tx()
    result = node.rpc("signrawtransactionwithkey", tx.hex(), WIFS, _prevtxs(tx), sighash)
    want = expected_signed(tx, SIGHASH_VALUES[sighash]).hex()
    assert result == {"hex": want, "complete": True}


@pytest.mark.parametrize("sighash", ["SINGLE", "SINGLE|ANYONECANPAY"])
def test_single_without_a_matching_output_leaves_the_input_unsigned(node, sighash):
    tx = _corpus_tx(seed=12, n_outputs=8)
    result = node.rpc("signrawtransactionwithkey", tx.hex(), WIFS, _prevtxs(tx), sighash)
    signed = Transaction.from_hex(result["hex"])
    want = expected_signed(tx, SIGHASH_VALUES[sighash], upto=8)
    for i in range(8):
        assert signed.vin[i] == want.vin[i], INPUTS[i][0]
    assert result["complete"] is False
    # inputs 8.. are left as they were; the anchor (13) needs nothing
    assert [e["vout"] for e in result["errors"]] == [tx.vin[i].prevout.n for i in range(8, 13)]
    stack = "Unable to sign input, invalid stack size (possibly missing key)"
    empty = "Witness program was passed an empty witness"
    # P2SH-wrapped inputs fail on the empty scriptSig, native witness ones on the empty witness
    assert [e["error"] for e in result["errors"]] == [stack, empty, stack, empty, empty]
    assert all(e["witness"] == [] and e["scriptSig"] == "" for e in result["errors"])


def _multisig_case(kind):
    keys3 = [K[7], K[8], K[9]]
    script = multisig(2, [k.pubkey for k in keys3])
    if kind == "p2sh":
        return keys3, script, p2sh(script), {"redeem": script}
    if kind == "p2wsh":
        return keys3, script, p2wsh(script), {"witness": script}
    return keys3, script, script, {}


@pytest.mark.parametrize("kind", ["bare", "p2sh", "p2wsh"])
@pytest.mark.parametrize("order", [(0, 2), (2, 0), (1, 0)])
def test_multisig_partial_then_complete(node, kind, order):
    keys3, script, spk, extra = _multisig_case(kind)
    tx = unsigned_tx(1, 1, seed=30)
    entry = [prevtx(tx, 0, spk, 50_000, **extra)]
    first = node.rpc("signrawtransactionwithkey", tx.hex(), [keys3[order[0]].wif], entry)
    assert first["complete"] is False
    assert first["errors"][0]["error"] == \
        "CHECK(MULTI)SIG failing with non-zero signature (possibly need more signatures)"
    second = node.rpc("signrawtransactionwithkey", first["hex"], [keys3[order[1]].wif], entry)
    both = node.rpc("signrawtransactionwithkey", tx.hex(), [keys3[i].wif for i in order], entry)
    assert second == both and second["complete"] is True
    # signatures in pubkey order, whatever order the keys came in
    signed = Transaction.from_hex(second["hex"])
    amount = 50_000 if kind == "p2wsh" else None
    sigs = [core_ecdsa(keys3[i].secret, ecdsa_sighash(tx, 0, script, 1, amount), 1)
            for i in sorted(order)]
    if kind == "p2wsh":
        assert signed.vin[0].witness == [b""] + sigs + [script]
    else:
        tail = push(script) if kind == "p2sh" else b""
        assert signed.vin[0].script_sig == b"\x00" + b"".join(push(s) for s in sigs) + tail


def test_multisig_without_any_key_pads_like_core(node):
    keys3, script, spk, extra = _multisig_case("p2sh")
    tx = unsigned_tx(1, 1, seed=31)
    result = node.rpc("signrawtransactionwithkey", tx.hex(), [], [prevtx(tx, 0, spk, **extra)])
    # Core's padding loop: OP_0 OP_0 then the redeemScript
    assert result["errors"][0]["scriptSig"] == ("0000" + push(script).hex())
    assert result["errors"][0]["error"] == \
        "Unable to sign input, invalid stack size (possibly missing key)"


def test_missing_key(node):
    tx = unsigned_tx(2, 1, seed=32)
    other = KeyPair(12345)
    entries = [prevtx(tx, 0, p2pkh(K[2].pubkey)), prevtx(tx, 1, p2wpkh(K[11].pubkey), 1000)]
    result = node.rpc("signrawtransactionwithkey", tx.hex(), [other.wif], entries)
    assert result["complete"] is False and result["hex"] == tx.hex()
    assert [e["error"] for e in result["errors"]] == [
        "Unable to sign input, invalid stack size (possibly missing key)",
        # Core's P2WPKH check wants exactly 2 witness items (bitcoin/bitcoin#15610); the
        # "empty witness" text is P2WSH's and taproot's
        "Witness program hash mismatch"]


def test_wrong_key_for_p2pk_and_a_missing_prevtx(node):
    tx = unsigned_tx(2, 1, seed=33)
    result = node.rpc("signrawtransactionwithkey", tx.hex(), [K[2].wif],
                      [prevtx(tx, 0, p2pk(K[0].pubkey))])
    assert [e["error"] for e in result["errors"]] == [
        "Unable to sign input, invalid stack size (possibly missing key)",
        "Input not found or already spent"]


def test_wrong_amount_fails_verification_with_cores_message(node):
    tx = unsigned_tx(1, 1, seed=34)
    spk = p2sh(p2wpkh(K[12].pubkey))
    good = node.rpc("signrawtransactionwithkey", tx.hex(), [K[12].wif],
                    [prevtx(tx, 0, spk, 5000, redeem=p2wpkh(K[12].pubkey))])
    assert good["complete"] is True
    # Verified against another amount, without the key to re-sign: the old
    # signature fails; Core's signer drops it (empty witness, P2WPKH's mismatch).
    result = node.rpc("signrawtransactionwithkey", good["hex"], [],
                      [prevtx(tx, 0, spk, 5001, redeem=p2wpkh(K[12].pubkey))])
    assert result["complete"] is False
    assert result["errors"][0]["error"] == "Witness program hash mismatch"
    assert result["errors"][0]["witness"] == []
    # with the key, the input is signed again for the new amount
    again = node.rpc("signrawtransactionwithkey", good["hex"], [K[12].wif],
                     [prevtx(tx, 0, spk, 5001, redeem=p2wpkh(K[12].pubkey))])
    assert again["complete"] is True and again["hex"] != good["hex"]


def test_wrong_amount_for_a_p2wsh_multisig(node):
    keys3, script, spk, extra = _multisig_case("p2wsh")
    tx = unsigned_tx(1, 1, seed=35)
    half = node.rpc("signrawtransactionwithkey", tx.hex(), [keys3[0].wif, keys3[1].wif],
                    [prevtx(tx, 0, spk, 7000, **extra)])
    assert half["complete"] is True
    result = node.rpc("signrawtransactionwithkey", half["hex"], [],
                      [prevtx(tx, 0, spk, 7001, **extra)])
    # neither signature verifies any more: Core pads 2-of-3 to OP_0 OP_0, too short
    assert result["errors"][0]["witness"] == ["", "", script.hex()]
    assert result["errors"][0]["error"] == \
        "Unable to sign input, invalid stack size (possibly missing key)"


def test_an_already_complete_input_is_left_untouched(node):
    tx = _corpus_tx()
    signed = node.rpc("signrawtransactionwithkey", tx.hex(), WIFS, _prevtxs(tx))
    again = node.rpc("signrawtransactionwithkey", signed["hex"], [], _prevtxs(tx))
    assert again == signed


def test_taproot_needs_every_spent_output(node):
    tx = unsigned_tx(2, 1, seed=36)
    entry = [prevtx(tx, 0, p2tr(K[16].xonly), 1000)]
    result = node.rpc("signrawtransactionwithkey", tx.hex(), [K[16].wif], entry)
    assert [e["error"] for e in result["errors"]] == [
        "Witness program was passed an empty witness", "Input not found or already spent"]


def test_untweaked_and_bip86_outputs_are_distinct(node):
    # Core's RPC signs only the untweaked output key; Quill also the BIP86 one.
    tx = unsigned_tx(1, 1, seed=37)
    other = KeyPair(777)
    result = node.rpc("signrawtransactionwithkey", tx.hex(), [other.wif],
                      [prevtx(tx, 0, p2tr(K[17].bip86_output_key()), 1000)])
    assert result["errors"][0]["error"] == "Witness program was passed an empty witness"


def test_uncompressed_key_cannot_sign_segwit(node):
    tx = unsigned_tx(1, 1, seed=38)
    unc = KeyPair(4242, compressed=False)
    result = node.rpc("signrawtransactionwithkey", tx.hex(), [unc.wif],
                      [prevtx(tx, 0, p2wpkh(unc.pubkey), 1000)])
    assert result["errors"][0]["error"] == "Witness program hash mismatch"
    assert result["errors"][0]["witness"] == []
