"""Build small signed spends for interpreter tests (CPython only: coincurve).

Signatures are made with the firmware's signers over the firmware's sighashes,
so these tests exercise the interpreter's plumbing (script codes, leaf hashes,
code-separator positions, annexes, hash types); the sighash algorithms
themselves are pinned by the BIP143/BIP341/sighash.json vectors elsewhere.
"""
from coincurve import PrivateKey

from quill.tx.interpreter import TAPROOT_LEAF_TAPSCRIPT, tapleaf_hash
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.tx.verify import verify_input
from quillfw.crypto import schnorr
from quillfw.sighash import legacy as sighash_legacy
from quillfw.sighash import segwit_v0 as sighash_segwit_v0
from quillfw.sighash import taproot as sighash_taproot

FUNDING_TXID = bytes(range(32))
INTERNAL_SECRET = (7).to_bytes(32, "big")


def secret(n):
    return n.to_bytes(32, "big")


def xonly(sec):
    return PrivateKey(sec).public_key_xonly.format()


def pubkey(sec, compressed=True):
    return PrivateKey(sec).public_key.format(compressed)


def spending_tx(script_sig=b"", witness=None, n_outputs=1, version=2, locktime=0, sequence=0xFFFFFFFE):
    outputs = [TxOut(1000 * (i + 1), b"\x51") for i in range(n_outputs)]
    return Transaction(version, [TxIn(OutPoint(FUNDING_TXID, 0), script_sig, sequence,
                                      witness or [])], outputs, locktime)


def plain(tx):
    inputs = [(i.prevout.hash, i.prevout.n, i.sequence) for i in tx.vin]
    outputs = [(o.value, o.script_pubkey) for o in tx.vout]
    return inputs, outputs


# -- taproot --------------------------------------------------------------------

def tap_leaf(script, leaf_version=TAPROOT_LEAF_TAPSCRIPT, internal=None):
    """One-leaf tree: (scriptPubKey, control block, leaf hash)."""
    internal = internal or xonly(INTERNAL_SECRET)
    leaf = tapleaf_hash(leaf_version, script)
    odd, output_key = schnorr.taproot_tweak_pubkey(internal, leaf)
    control = bytes((leaf_version | int(odd),)) + internal
    return b"\x51\x20" + output_key, control, leaf


def schnorr_sig(sec, tx, spent, hash_type=0, annex=None, leaf=None, codesep_pos=0xFFFFFFFF):
    inputs, outputs = plain(tx)
    digest = sighash_taproot.sighash_tx(tx.version, inputs, outputs, tx.locktime,
                                        [(o.value, o.script_pubkey) for o in spent], 0,
                                        hash_type, annex, leaf, 0, codesep_pos)
    sig = schnorr.sign(sec, digest)
    return sig + bytes((hash_type,)) if hash_type else sig


# -- ECDSA ----------------------------------------------------------------------

def ecdsa_sig(sec, digest, hash_type=1):
    return PrivateKey(sec).sign(digest, hasher=None) + bytes((hash_type,))


def legacy_digest(tx, script_code, hash_type=1):
    inputs, outputs = plain(tx)
    return sighash_legacy.sighash_tx(tx.version, inputs, outputs, tx.locktime, 0, script_code,
                                     hash_type)


def bip143_digest(tx, script_code, amount, hash_type=1):
    inputs, outputs = plain(tx)
    return sighash_segwit_v0.sighash_tx(tx.version, inputs, outputs, tx.locktime, 0, script_code,
                                        amount, hash_type)


def verify(tx, spent_output, flags):
    return verify_input(tx, 0, [spent_output], flags)
