"""Known-answer self-test, run once at boot before the firmware serves.

A board whose hashing or curve arithmetic is wrong (a corrupted flash image, a
bad .mpy, an interpreter bug) must not sign: its signatures would not verify,
and a wrong nonce computation can expose the key. Each check recomputes one
published answer with the firmware's own code:

    sha256        SHA-256("abc"), FIPS 180-2 appendix B.1
    hmac_sha256   RFC 4231 test case 2 (the HMAC behind RFC 6979 nonces)
    ripemd160     RIPEMD-160("abc"), the RIPEMD-160 reference page
    ecdsa_sign    BIP143 "Native P2WPKH" example, input 1: Core's RFC 6979
                  low-S signature of its sighash
    ecdsa_verify  that signature verifies under the example's public key
    schnorr_sign  BIP340 test vector 1 (key, aux_rand, message -> signature)

API:
    run() -> status      run every check now (stops at the first failure)
    status() -> str      "ok" or "failed: <check>"; runs the checks if not yet run
    passed() -> bool     status() == "ok"; the signing methods refuse unless True

Failure texts name the check only: never key material, nonces or exception text.

Test hook: under the unix port (and CPython) the environment variable
QUILL_SELFTEST_FAULT=<check> corrupts that check's known answer, so tests can
watch a failure reach get_info. It can only make the self-test fail, never
pass; boards have no environment (no os.getenv), so there it does nothing.
"""
import gc

from quillfw.crypto import ecdsa, schnorr
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import hmac_sha256, ripemd160, sha256

FAULT_ENV = "QUILL_SELFTEST_FAULT"

_BIP143_KEY = "619c335025c7f4012e556c2a58b2506e30b8511b53ade95ea316fd8c3286feb9"
_BIP143_PUBKEY = "025476c2e83188368da1ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee6357"
_BIP143_SIGHASH = "c37af31116d1b27caf68aae9e3ac82f1477929014d5b917657d0eb49478cb670"
_BIP143_SIGNATURE = ("304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a"
                     "0220573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee")

_BIP340_KEY = "b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfef"
_BIP340_AUX = "0000000000000000000000000000000000000000000000000000000000000001"
_BIP340_MSG = "243f6a8885a308d313198a2e03707344a4093822299f31d0082efa98ec4e6c89"
_BIP340_SIGNATURE = ("6896bd60eeae296db48a229ff71dfe071bde413e6d43f917dc8dcf8c78de3341"
                     "8906d11ac976abccb20b091292bff4ea897efcb639ea871cfa95f6de339e4b0a")


def _sha256(answer):
    return sha256(b"abc") == answer


def _hmac_sha256(answer):
    return hmac_sha256(b"Jefe", b"what do ya want for nothing?") == answer


def _ripemd160(answer):
    return ripemd160(b"abc") == answer


def _ecdsa_sign(answer):
    return ecdsa.sign(bytes.fromhex(_BIP143_KEY), bytes.fromhex(_BIP143_SIGHASH)) == answer


def _ecdsa_verify(answer):
    return ecdsa.verify(bytes.fromhex(_BIP143_PUBKEY), bytes.fromhex(_BIP143_SIGHASH), answer)


def _schnorr_sign(answer):
    return schnorr.sign(bytes.fromhex(_BIP340_KEY), bytes.fromhex(_BIP340_MSG),
                        bytes.fromhex(_BIP340_AUX)) == answer


# (name, known answer, check); the cheap hashes first, so a broken hash fails fast
CHECKS = (
    ("sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", _sha256),
    ("hmac_sha256", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
     _hmac_sha256),
    ("ripemd160", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc", _ripemd160),
    ("ecdsa_sign", _BIP143_SIGNATURE, _ecdsa_sign),
    ("ecdsa_verify", _BIP143_SIGNATURE, _ecdsa_verify),
    ("schnorr_sign", _BIP340_SIGNATURE, _schnorr_sign),
)

_status = None


def _injected_fault():
    try:
        from os import getenv
    except ImportError:  # boards: no environment
        return None
    return getenv(FAULT_ENV)


def _known_answer(name, answer_hex, fault):
    answer = bytes.fromhex(answer_hex)
    if name == fault:
        answer = answer[:-1] + bytes((answer[-1] ^ 1,))
    return answer


def _first_failure():
    fault = _injected_fault()
    for name, answer_hex, check in CHECKS:
        try:
            ok = check(_known_answer(name, answer_hex, fault))
        except Exception:  # MemoryError, or a bug: the check failed either way
            ok = False
        if not ok:
            return name
    return None


def run():
    global _status
    try:
        failed = _first_failure()
    finally:
        # the test keys must not linger in the signer's key cache
        ec.clear_key_cache()
        gc.collect()
    _status = "ok" if failed is None else "failed: " + failed
    return _status


def status():
    if _status is None:
        run()
    return _status


def passed():
    return status() == "ok"
