"""Helpers for the signing tests: keys, output scripts of every type, unsigned
transactions, and independent references:
python-bitcointx for signature hashes and Core's ECDSA procedure on
libsecp256k1 (tests/crosscheck/test_ecdsa_vs_core_procedure.core_sign)."""
import hashlib
import os
import random
import subprocess
import time
from pathlib import Path

import coincurve
from bitcointx.core import CMutableTransaction, COutPoint, CTxIn, CTxOut
from bitcointx.core.script import (
    SIGVERSION_BASE,
    SIGVERSION_WITNESS_V0,
    CScript,
    SIGHASH_Type,
    SignatureHash,
    SignatureHashSchnorr,
)

from quill.tx.address import encode_secret
from quill.tx.script import push_data as push
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quillfw.crypto.hashes import tagged_hash
from tests.crosscheck.test_ecdsa_vs_core_procedure import core_sign

SIGHASH_NAMES = ["DEFAULT", "ALL", "NONE", "SINGLE", "ALL|ANYONECANPAY", "NONE|ANYONECANPAY",
                 "SINGLE|ANYONECANPAY"]
SIGHASH_VALUES = {"DEFAULT": 0, "ALL": 1, "NONE": 2, "SINGLE": 3, "ALL|ANYONECANPAY": 0x81,
                  "NONE|ANYONECANPAY": 0x82, "SINGLE|ANYONECANPAY": 0x83}
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def h160(data):
    return hashlib.new("ripemd160", hashlib.sha256(data).digest()).digest()


class KeyPair:
    def __init__(self, n, compressed=True, chain="regtest"):
        self.secret = n.to_bytes(32, "big") if isinstance(n, int) else n
        self.compressed = compressed
        self.priv = coincurve.PrivateKey(self.secret)
        self.pubkey = self.priv.public_key.format(compressed)
        self.xonly = self.priv.public_key.format(True)[1:]
        self.wif = encode_secret(self.secret, compressed, chain)

    def bip86_output_key(self):
        tweaked = coincurve.PublicKeyXOnly(self.xonly)
        tweaked.tweak_add(tagged_hash("TapTweak", self.xonly))
        return tweaked.format()

    def bip86_secret(self):
        d = int.from_bytes(self.secret, "big")
        if self.priv.public_key.format(True)[0] == 3:
            d = N - d
        t = int.from_bytes(tagged_hash("TapTweak", self.xonly), "big")
        return ((d + t) % N).to_bytes(32, "big")


def keys(seed, count, chain="regtest"):
    rng = random.Random(seed)
    return [KeyPair(rng.randrange(1, N), chain=chain) for _ in range(count)]


def multisig(m, pubkeys):
    return bytes((0x50 + m,)) + b"".join(push(k) for k in pubkeys) + bytes((0x50 + len(pubkeys), 0xAE))


def p2pkh(pubkey):
    return b"\x76\xa9\x14" + h160(pubkey) + b"\x88\xac"


def p2pk(pubkey):
    return push(pubkey) + b"\xac"


def p2sh(script):
    return b"\xa9\x14" + h160(script) + b"\x87"


def p2wpkh(pubkey):
    return b"\x00\x14" + h160(pubkey)


def p2wsh(script):
    return b"\x00\x20" + hashlib.sha256(script).digest()


def p2tr(xonly):
    return b"\x51\x20" + xonly


def unsigned_tx(n_inputs, n_outputs, seed=1, version=2, locktime=0):
    rng = random.Random(seed)
    vin = [TxIn(OutPoint(rng.randbytes(32), rng.randrange(0, 4)), b"", 0xFFFFFFFD - (i % 2))
           for i in range(n_inputs)]
    vout = [TxOut(10_000 + 1000 * j, p2wpkh(bytes([2]) + rng.randbytes(32))) for j in range(n_outputs)]
    return Transaction(version, vin, vout, locktime)


def prevtx(tx, i, script_pubkey, amount=None, redeem=None, witness=None):
    entry = {"txid": tx.vin[i].prevout.hash[::-1].hex(), "vout": tx.vin[i].prevout.n,
             "scriptPubKey": script_pubkey.hex()}
    if amount is not None:
        entry["amount"] = "%d.%08d" % divmod(amount, 100_000_000)
    if redeem is not None:
        entry["redeemScript"] = redeem.hex()
    if witness is not None:
        entry["witnessScript"] = witness.hex()
    return entry


# -- independent references ------------------------------------------------------------------


def _btx(tx):
    return CMutableTransaction(
        [CTxIn(COutPoint(i.prevout.hash, i.prevout.n), nSequence=i.sequence) for i in tx.vin],
        [CTxOut(o.value, CScript(o.script_pubkey)) for o in tx.vout],
        nLockTime=tx.locktime, nVersion=tx.version)


def ecdsa_sighash(tx, i, script_code, hash_type, amount=None):
    """bitcointx's SignatureHash: legacy when amount is None, else BIP143."""
    if amount is None:
        return bytes(SignatureHash(CScript(script_code), _btx(tx), i, SIGHASH_Type(hash_type),
                                   sigversion=SIGVERSION_BASE))
    return bytes(SignatureHash(CScript(script_code), _btx(tx), i, SIGHASH_Type(hash_type),
                               amount=amount, sigversion=SIGVERSION_WITNESS_V0))


def taproot_sighash(tx, i, spent, hash_type):
    txouts = [CTxOut(a, CScript(s)) for a, s in spent]
    return bytes(SignatureHashSchnorr(_btx(tx), i, txouts,
                                      hashtype=None if hash_type == 0 else SIGHASH_Type(hash_type)))


def core_ecdsa(secret, digest, hash_type):
    """Core's CKey::Sign (RFC 6979, low R by grinding, low S) + the hash-type byte."""
    return core_sign(secret, digest)[0] + bytes((hash_type,))


# -- a daemon with an emulated device ----------------------------------------------------------


def process_children(pid):
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def firmware_pid(daemon):
    """The micropython process behind quilld's emulator (quilld -> quill-emu -> micropython)."""
    for emu in process_children(daemon.proc.pid):
        for child in process_children(emu):
            try:
                cmd = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:         # exited meanwhile (a killed firmware being replaced)
                continue
            if b"heapsize" in cmd:
                return child
    return None


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    return None


def kill(pid):
    os.kill(pid, 9)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)
