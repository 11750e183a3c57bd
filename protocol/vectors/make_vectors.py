"""Regenerate the wire vectors in this folder (run with the project's .venv python).

Written independently of the firmware: cbor2 (canonical=True) encodes, and
frames are built here with struct and binascii, so the firmware codec and
framing are checked against a second implementation. Expected reader events
for the byte streams are written out by hand.
"""
import binascii
import json
import struct
from pathlib import Path

import cbor2

HERE = Path(__file__).resolve().parent
MAGIC = bytes.fromhex("c551")


def frame(body: bytes) -> bytes:
    length = struct.pack(">I", len(body))
    return MAGIC + length + body + struct.pack(">I", binascii.crc32(length + body))


def dumps(value) -> bytes:
    return cbor2.dumps(value, canonical=True)


INFO = {"firmware_version": "0.1.0", "protocol_version": 1, "board": "emulator", "emulator": True,
        "target": "unix", "boot_id": "5c1e0f2a9b3d4e67",
        "implementation": "micropython", "implementation_version": "1.29.0", "heap_free": 60096,
        "max_message_size": 4096,
        "limits": {"max_inputs": 10000, "max_outputs": 10000, "max_script_size": 3600,
                   "max_keys": 64},
        "methods": ["get_info", "ping"], "script_types": [], "sighash_types": []}

MESSAGES = [
    ("ping request", {"id": "1", "method": "ping"}),
    ("ping request, empty params", {"id": "a1b2", "method": "ping", "params": {}}),
    ("get_info request", {"id": "0123456789abcdef", "method": "get_info"}),
    ("ping reply idle", {"id": "1", "result": "idle"}),
    ("ping reply busy", {"id": "7", "result": "busy"}),
    ("ping reply awaiting_user", {"id": "7", "result": "awaiting_user"}),
    ("get_info reply", {"id": "2", "result": INFO}),
    ("debug_sleep request", {"id": "s", "method": "debug_sleep",
                             "params": {"ms": 1500, "awaiting_user": True}}),
    ("debug_alloc 23", {"id": "x", "method": "debug_alloc", "params": {"size": 23}}),
    ("debug_alloc 24", {"id": "x", "method": "debug_alloc", "params": {"size": 24}}),
    ("debug_alloc 255", {"id": "x", "method": "debug_alloc", "params": {"size": 255}}),
    ("debug_alloc 256", {"id": "x", "method": "debug_alloc", "params": {"size": 256}}),
    ("debug_alloc 65535", {"id": "x", "method": "debug_alloc", "params": {"size": 65535}}),
    ("debug_alloc 65536", {"id": "x", "method": "debug_alloc", "params": {"size": 65536}}),
    ("debug_alloc 2^32", {"id": "x", "method": "debug_alloc", "params": {"size": 4294967296}}),
    ("debug_alloc 2^64-1", {"id": "x", "method": "debug_alloc",
                            "params": {"size": 18446744073709551615}}),
    ("unknown method error", {"id": "9", "error": {"code": -32601, "message": "Unknown method"}}),
    ("rejected bytes error", {"id": "00", "error": {"code": -32600, "data": 7,
                                                    "message": "Discarded 7 bytes before frame magic"}}),
    ("out of memory error", {"id": "q3", "error": {"code": -32005, "message": "Out of memory"}}),
    ("busy error", {"id": "q4", "error": {"code": -32004,
                                          "message": "Device busy with another request"}}),
    ("log message", {"log": "serving, idle timeout 2000 ms"}),
    # user confirmation (SPEC.md section 8)
    ("set_confirm_policy request, above", {"id": "c1", "method": "set_confirm_policy",
                                           "params": {"policy": "above", "amount": 1000000}}),
    ("set_confirm_policy request, always", {"id": "c2", "method": "set_confirm_policy",
                                            "params": {"policy": "always"}}),
    ("set_confirm_policy reply", {"id": "c1", "result": {"policy": "above", "amount": 1000000}}),
    ("user cancelled error", {"id": "c3", "error": {"code": -32000,
                                                    "message": "Signing refused on the device"}}),
    ("confirmation timeout error", {"id": "c4", "error": {
        "code": -32007, "message": "Confirmation timed out on the device"}}),
    ("non-ASCII id", {"id": "caf\u00e9", "method": "ping"}),
]

# Signing messages (SPEC.md section 7). They carry byte strings, which JSON lacks:
# in signing.json a byte string is written {"bytes": "<hex>"}.
SIGNING = [
    ("sign_begin request", {"id": "s1", "method": "sign_begin",
                            "params": {"version": 2, "locktime": 0, "n_inputs": 1, "n_outputs": 1,
                                       "algorithms": ["segwit_v0"]}}),
    ("sign_begin reply", {"id": "s1", "result": {"heap_free": 18000, "session": "5c1e0f2a1"}}),
    ("sign_add_key request (private key 1)", {"id": "s2", "method": "sign_add_key",
                                              "params": {"secret": bytes(31) + b"\x01",
                                                         "compressed": True}}),
    ("sign_add_inputs request", {"id": "s3", "method": "sign_add_inputs", "params": {"inputs": [
        [bytes(range(32)), 0, 0xFFFFFFFD, 100000,
         bytes.fromhex("0014751e76e8199196d454941c45d1b3a323f1433bd6")]]}}),
    ("sign_add_inputs reply", {"id": "s3", "result": [bytes(range(16))]}),
    ("sign_stage request", {"id": "s4", "method": "sign_stage",
                            "params": {"name": "script_code", "data": bytes.fromhex("51")}}),
    ("sign_taproot request, BIP86 key path", {"id": "s5", "method": "sign_taproot",
                                              "params": {"input_index": 0, "hash_type": 0,
                                                         "key_index": 0, "tweak": True}}),
    ("sign_end request", {"id": "s6", "method": "sign_end"}),
    ("null result", {"id": "s6", "result": None}),
    ("sign_add_inputs request naming its session",
     {"id": "s8", "method": "sign_add_inputs", "params": {"session": "5c1e0f2a1", "inputs": []}}),
    ("stale session error", {"id": "s8", "error": {
        "code": -32008, "message": "Request of a previous signing session or boot"}}),
    ("session error", {"id": "s7", "error": {"code": -32001, "data": "tx_changed",
                                             "message": "transaction changed during signing"}}),
]


def as_json(value):
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return value


# (name, hex, substring of the decoder's error)
NONCANONICAL = [
    ("empty input", "", "empty"),
    ("integer 0 in one extra byte", "1800", "shortest"),
    ("integer 255 in two bytes", "1900ff", "shortest"),
    ("integer 65535 in four bytes", "1a0000ffff", "shortest"),
    ("integer 2^32-1 in eight bytes", "1b00000000ffffffff", "shortest"),
    ("negative -1 in one extra byte", "3800", "shortest"),
    ("text length not shortest", "7801" + "61", "shortest"),
    ("map length not shortest", "b801" + "6161" + "01", "shortest"),
    ("indefinite-length array", "9f01ff", "indefinite"),
    ("indefinite-length text", "7f6161ff", "indefinite"),
    ("indefinite-length map", "bf616101ff", "indefinite"),
    ("map keys out of order", "a2626964613161616132", "order"),
    ("map keys in length-first, not bytewise, order", "a260001903e800", "order"),
    ("duplicate map key", "a2616101616102", "duplicate"),
    ("half float", "f93c00", "floating"),
    ("double float", "fb3ff0000000000000", "floating"),
    ("tag 0", "c06161", "tag"),
    ("undefined", "f7", "simple"),
    ("simple value 16", "f0", "simple"),
    ("two-byte simple value", "f820", "simple"),
    ("reserved additional information", "1c", "reserved"),
    ("invalid UTF-8 text", "62c328", "UTF-8"),
    ("trailing bytes", "0000", "trailing"),
    ("truncated text", "6461", "truncated"),
    ("truncated integer", "19ff", "truncated"),
    ("array longer than input", "9b00000001000000000101", "truncated"),
    ("array key in map", "a1800001", "key"),
    ("nesting deeper than 16", "81" * 17 + "00", "nesting"),
]

# canonical encodings and the values they decode to (RFC 8949 Appendix A, subset)
VALUES = [
    (0, "00"), (23, "17"), (24, "1818"), (100, "1864"), (1000, "1903e8"),
    (1000000, "1a000f4240"), (1000000000000, "1b000000e8d4a51000"),
    (18446744073709551615, "1bffffffffffffffff"), (-1, "20"), (-10, "29"), (-100, "3863"),
    (-1000, "3903e7"), (-18446744073709551616, "3bffffffffffffffff"),
    (False, "f4"), (True, "f5"), (None, "f6"), ("", "60"), ("a", "6161"),
    ("IETF", "6449455446"), ("\u00fc", "62c3bc"), ("\u6c34", "63e6b0b4"),
    ([], "80"), ([1, 2, 3], "83010203"), ([1, [2, 3], [4, 5]], "8301820203820405"),
    ({}, "a0"), ({"a": 1, "b": [2, 3]}, "a26161016162820203"),
    (["a", {"b": "c"}], "826161a161626163"),
    ({"a": "A", "b": "B", "c": "C", "d": "D", "e": "E"}, "a56161614161626142616361436164614461656145"),
    ({"id": 1, "method": 2, "params": 3}, "a362696401666d6574686f640266706172616d7303"),
]


def streams():
    ping = frame(dumps({"id": "1", "method": "ping"}))
    info = frame(dumps({"id": "2", "method": "get_info"}))
    ping_body = dumps({"id": "1", "method": "ping"}).hex()
    info_body = dumps({"id": "2", "method": "get_info"}).hex()
    bad_crc = bytearray(ping)
    bad_crc[-1] ^= 0x01
    oversize = MAGIC + struct.pack(">I", 4097)
    return [
        ("one frame", [ping], False, [{"frame": ping_body}]),
        ("garbage before a frame", [b"hello\x00\xff" + ping], False,
         [{"reject": 7}, {"frame": ping_body}]),
        ("two frames in one write", [ping + info], False,
         [{"frame": ping_body}, {"frame": info_body}]),
        ("frame split into single bytes", [ping[i:i + 1] for i in range(len(ping))], False,
         [{"frame": ping_body}]),
        ("magic split across writes", [b"zz" + ping[:1], ping[1:]], False,
         [{"reject": 2}, {"frame": ping_body}]),
        ("lone first magic byte is skipped", [MAGIC[:1] + ping], False,
         [{"reject": 1}, {"frame": ping_body}]),
        ("bad CRC", [bytes(bad_crc) + info], False,
         [{"reject": len(ping)}, {"frame": info_body}]),
        ("oversized length refused at the header", [oversize + b"\x00" * 16 + info], False,
         [{"reject": 6}, {"reject": 16}, {"frame": info_body}]),
        ("truncated frame dropped when idle", [ping[:9]], True, [{"reject": 9}]),
        ("trailing garbage reported when idle", [ping + b"\x01\x02\x03"], True,
         [{"frame": ping_body}, {"reject": 3}]),
        ("empty body frame", [frame(b"")], False, [{"frame": ""}]),
        ("maximum body", [frame(b"\x00" * 4096)], False, [{"frame": "00" * 4096}]),
    ]


# The seed and key methods (SPEC.md section 9) as one exchange with a fresh device: request and
# the reply expected. The words are BIP39's test mnemonic; its master fingerprint 73c5da0a and the
# tpub of m/84h/1h/0h are the values every wallet derives from it (tests/keys checks them against
# Bitcoin Core deriving from the same mnemonic's tprv).
_WORDS = "abandon " * 11 + "about"
_FP = bytes.fromhex("73c5da0a")
_TPUB = ("tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxys"
         "QAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M")
KEYS = [
    ("get_xpub before set-up", {"id": "k1", "method": "get_xpub", "params": {"path": "m/84h/1h/0h"}},
     {"id": "k1", "error": {"code": -32002, "message": "Device has no seed: generate or restore one first",
                            "data": "no_seed"}}),
    ("seed_restore", {"id": "k2", "method": "seed_restore", "params": {"mnemonic": _WORDS, "pin": "1234"}},
     {"id": "k2", "result": {"fingerprint": _FP}}),
    ("get_xpub m/84h/1h/0h test", {"id": "k3", "method": "get_xpub",
                                   "params": {"path": "m/84h/1h/0h", "network": "test"}},
     {"id": "k3", "result": {"xpub": _TPUB, "fingerprint": _FP}}),
    ("lock", {"id": "k4", "method": "lock"}, {"id": "k4", "result": None}),
    ("get_xpub while locked", {"id": "k5", "method": "get_xpub", "params": {"path": "m"}},
     {"id": "k5", "error": {"code": -32002, "message": "Device is locked: unlock it with its PIN",
                            "data": "locked"}}),
    ("unlock, wrong PIN", {"id": "k6", "method": "unlock", "params": {"pin": "9999"}},
     {"id": "k6", "error": {"code": -32002, "message": "Wrong PIN, 9 attempts left", "data": "wrong_pin"}}),
    ("unlock", {"id": "k7", "method": "unlock", "params": {"pin": "1234"}},
     {"id": "k7", "result": {"fingerprint": _FP}}),
    ("seed_restore over a seed", {"id": "k8", "method": "seed_restore",
                                  "params": {"mnemonic": _WORDS, "pin": "1234"}},
     {"id": "k8", "error": {"code": -32602, "message": "Device already has a seed: wipe it first"}}),
    ("wipe", {"id": "k9", "method": "wipe"}, {"id": "k9", "result": None}),
    ("seed_generate request", {"id": "ka", "method": "seed_generate",
                               "params": {"words": 24, "pin": "1234", "entropy": bytes(range(32))}},
     None),
]


# PSBT signing with the device's keys (SPEC.md section 11), one exchange after KEYS' seed_restore:
# a P2WPKH input of m/84h/1h/0h/0/0 proven by its previous transaction (sent in two pieces), a
# payment and change to m/84h/1h/0h/1/0, then the refusals. The signature is the one Bitcoin
# Core's wallet makes for the same transaction with the mnemonic's tprv (checked against a real
# bitcoind when these vectors were made; tests/keys/test_core_send.py checks it for every input
# type). Replies None are not fixed: session ids and tokens are random per session. A
# txin_token of 16 zero bytes stands for the token the device answered for that input.
_SPK = bytes.fromhex("0014d0c4a3ef09e997b6e99e397e518fe3e41a118ca1")      # m/84h/1h/0h/0/0
_CHANGE = bytes.fromhex("00142f34aa1cf00a53b055a291a03a7d45f0a6988b52")   # m/84h/1h/0h/1/0
_PAYEE = bytes.fromhex("0014") + bytes(range(20))


def _prev_tx(spk):
    """Version 2, one input (11..11:0, scriptSig OP_1), one output of 100,000 sat to spk."""
    return (struct.pack("<I", 2) + b"\x01" + b"\x11" * 32 + struct.pack("<I", 0) + b"\x01\x51"
            + struct.pack("<I", 0xFFFFFFFF) + b"\x01" + struct.pack("<q", 100000)
            + bytes((len(spk),)) + spk + struct.pack("<I", 0))


def _txid(raw):
    import hashlib
    return hashlib.sha256(hashlib.sha256(raw).digest()).digest()


_PREV = _prev_tx(_SPK)
_TXIN = [_txid(_PREV), 0, 0xFFFFFFFD, 100000, _SPK]
_FORGED = _prev_tx(_SPK)[:-5] + b"\x01" + bytes(4)     # another transaction: its txid differs
_SIG = bytes.fromhex("304402206021387a5de0711158136fd7cc7d3bacd580b22635ca32e44c95af2a881c49bc0220"
                     "6570ebebfcf591aa6746d1e7c5e413535eccd587f87898a014e0cc1ba3b3c72f01")
_BEGIN = {"version": 2, "locktime": 0, "n_inputs": 1, "n_outputs": 2, "network": "regtest"}
PSBT = [
    ("seed_restore", KEYS[1][1], KEYS[1][2]),
    ("psbt_begin", {"id": "p1", "method": "psbt_begin", "params": _BEGIN}, None),
    ("psbt_prev_tx, first piece", {"id": "p2", "method": "psbt_prev_tx",
                                   "params": {"vout": 0, "data": _PREV[:40], "more": True}},
     {"id": "p2", "result": None}),
    ("psbt_prev_tx, last piece", {"id": "p3", "method": "psbt_prev_tx",
                                  "params": {"vout": 0, "data": _PREV[40:]}},
     {"id": "p3", "result": None}),
    ("psbt_add_inputs", {"id": "p4", "method": "psbt_add_inputs", "params": {"inputs": [_TXIN]}}, None),
    ("psbt_add_outputs, payment and change",
     {"id": "p5", "method": "psbt_add_outputs",
      "params": {"outputs": [[60000, _PAYEE], [39000, _CHANGE, "m/84h/1h/0h/1/0"]]}}, None),
    ("psbt_sign", {"id": "p6", "method": "psbt_sign",
                   "params": {"input_index": 0, "txin": _TXIN, "txin_token": bytes(16),
                              "path": "m/84h/1h/0h/0/0", "hash_type": 1}},
     {"id": "p6", "result": _SIG}),
    ("psbt_end", {"id": "p7", "method": "psbt_end"}, {"id": "p7", "result": None}),
    ("display_address", {"id": "p8", "method": "display_address",
                         "params": {"path": "m/84h/1h/0h/0/0", "script_type": "p2wpkh",
                                    "network": "regtest"}},
     {"id": "p8", "result": {"address": "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk"}}),
    ("psbt_begin again", {"id": "p9", "method": "psbt_begin", "params": _BEGIN}, None),
    ("psbt_prev_tx of another transaction", {"id": "pa", "method": "psbt_prev_tx",
                                             "params": {"vout": 0, "data": _FORGED}},
     {"id": "pa", "result": None}),
    ("psbt_add_inputs refused", {"id": "pb", "method": "psbt_add_inputs", "params": {"inputs": [_TXIN]}},
     {"id": "pb", "error": {"code": -32602, "message": "input 0: the previous transaction's txid is "
                                                       "not the outpoint's", "data": "prev_tx"}}),
    ("psbt_begin, change not the device's", {"id": "pc", "method": "psbt_begin", "params": _BEGIN}, None),
    ("psbt_add_inputs, unproven", {"id": "pd", "method": "psbt_add_inputs", "params": {"inputs": [_TXIN]}},
     None),
    ("psbt_add_outputs refused", {"id": "pe", "method": "psbt_add_outputs",
                                  "params": {"outputs": [[60000, _PAYEE, "m/84h/1h/0h/1/0"]]}},
     {"id": "pe", "error": {"code": -32602, "message": "output 0 is not this device's key at "
                                                       "m/84h/1h/0h/1/0, nor a registered multisig "
                                                       "wallet's change: not change",
                            "data": "not_own"}}),
    ("lock", {"id": "pf", "method": "lock"}, {"id": "pf", "result": None}),
    ("psbt_begin while locked", {"id": "pg", "method": "psbt_begin", "params": _BEGIN},
     {"id": "pg", "error": {"code": -32002, "message": "Device is locked: unlock it with its PIN",
                            "data": "locked"}}),
]


# Multisig wallets (SPEC.md section 12), one exchange after KEYS' seed_restore: a 2-of-3
# wsh(sortedmulti) of the test mnemonic's BIP48 key and two others' (the BIP39 vectors' "legal
# winner ... yellow" and "letter advice ... above" at m/48h/1h/0h/2h), its refusals, a PSBT that
# spends its first receive output with change to its first change output, and the refusal once
# it is removed. The scripts and the address are Bitcoin Core's for the same descriptor
# (tests/keys/test_core_multisig.py registers the same keys and checks the address against Core's
# deriveaddresses, and every signature against Core's). The signature's reply is not fixed here.
_ACCOUNT = "m/48h/1h/0h/2h"
_COSIGNERS = [
    [bytes.fromhex("73c5da0a"), _ACCOUNT, "tpubDFH9dgzveyD8zTbPUFuLrGmCydNvxehyNdUXKJAQN8x4aZ4j6UZqGfnq"
                                          "FrD4NqyaTVGKbvEW54tsvPTK2UoSbCC1PJY8iCNiwTL3RWZEheQ"],
    [bytes.fromhex("b8688df1"), _ACCOUNT, "tpubDEfobrrtptRTbKf4gysDhoabneABDTAcdj3Vbn4XwPsLE2pmqpizSPRG"
                                          "6zHsbAMuiSgWmWPsYCLHTKTPpyrGJ5rAoTpKoQNZcxodiPf2tSJ"],
    [bytes.fromhex("28645006"), _ACCOUNT, "tpubDEwqCvJxKwKWX9xvRe48uofWJn1Y89Jn8UeH1Efrjb1UEVjUDy3URYTi"
                                          "qWaVCW7WdvHrL8XrSihHEhTwv5H3VDJoakjuCHiAnr6xcF2Xm4s"],
]
_VAULT = {"name": "vault", "script_type": "p2wsh", "sorted": True, "threshold": 2,
          "signers": _COSIGNERS, "network": "regtest"}
_MS_SPK = bytes.fromhex("00201c7a2a7826f9c5e069a50798f4ef3d0df8ecc44f45d9690eb4f62f5601db5dbb")    # /0/0
_MS_CHANGE = bytes.fromhex("0020b7fa44093e6d1dd0499f57f9f577a9bd545fa8d605870126548fb3216efc3f4d")  # /1/0
_MS_PREV = _prev_tx(_MS_SPK)
_MS_TXIN = [_txid(_MS_PREV), 0, 0xFFFFFFFD, 100000, _MS_SPK]
_MS_SIGN = {"input_index": 0, "txin": _MS_TXIN, "txin_token": bytes(16), "path": _ACCOUNT + "/0/0",
            "hash_type": 1, "multisig": True}


def _ms_psbt(prefix, change):
    outputs = [[60000, _PAYEE]] + ([[39000, _MS_CHANGE, _ACCOUNT + "/1/0"]] if change else [])
    begin = dict(_BEGIN, n_outputs=len(outputs), multisig=True)
    return [
        ("psbt_begin", {"id": prefix + "1", "method": "psbt_begin", "params": begin}, None),
        ("psbt_prev_tx", {"id": prefix + "2", "method": "psbt_prev_tx",
                          "params": {"vout": 0, "data": _MS_PREV}}, {"id": prefix + "2", "result": None}),
        ("psbt_add_inputs", {"id": prefix + "3", "method": "psbt_add_inputs",
                             "params": {"inputs": [_MS_TXIN]}}, None),
        ("psbt_add_outputs", {"id": prefix + "4", "method": "psbt_add_outputs",
                              "params": {"outputs": outputs}}, None),
    ]


_NOT_COSIGNER = {"code": -32602, "message": "This device's key is not one of the cosigners",
                 "data": "not_cosigner"}
MULTISIG = [
    ("seed_restore", KEYS[1][1], KEYS[1][2]),
    ("multisig_register", {"id": "m1", "method": "multisig_register", "params": _VAULT},
     {"id": "m1", "result": {"name": "vault", "address": "bcrt1qr3az57pxl8z7q6d9q7v0fmeaphuwe3z0ghvk"
                                                         "jr457ch4vqwmtkask29wwr"}}),
    ("multisig_list", {"id": "m2", "method": "multisig_list"},
     {"id": "m2", "result": [{"name": "vault", "script_type": "p2wsh", "sorted": True, "threshold": 2,
                              "n": 3}]}),
    ("multisig_register, the same name", {"id": "m3", "method": "multisig_register", "params": _VAULT},
     {"id": "m3", "error": {"code": -32602,
                            "message": "A multisig wallet named 'vault' is already registered"}}),
    ("multisig_register without the device's key",
     {"id": "m4", "method": "multisig_register",
      "params": dict(_VAULT, name="theirs", signers=_COSIGNERS[1:])}, {"id": "m4", "error": _NOT_COSIGNER}),
    ("multisig_register, the device's fingerprint on another key",
     {"id": "m5", "method": "multisig_register",
      "params": dict(_VAULT, name="forged", signers=[[_COSIGNERS[0][0], _ACCOUNT, _COSIGNERS[1][2]],
                                                     _COSIGNERS[2]])},
     {"id": "m5", "error": {"code": -32602, "message": "Signer 1 has this device's fingerprint but not "
                                                       "its key at m/48h/1h/0h/2h", "data": "not_cosigner"}}),
    ("multisig_register, threshold above n",
     {"id": "m6", "method": "multisig_register", "params": dict(_VAULT, name="t", threshold=4)},
     {"id": "m6", "error": {"code": -32602, "message": "Invalid multisig wallet: threshold must be 1 to 3"}}),
    *_ms_psbt("q", True),
    ("psbt_sign, a registered multisig input", {"id": "q5", "method": "psbt_sign", "params": _MS_SIGN},
     None),
    ("psbt_end", {"id": "q6", "method": "psbt_end"}, {"id": "q6", "result": None}),
    ("multisig_remove", {"id": "m7", "method": "multisig_remove", "params": {"name": "vault"}},
     {"id": "m7", "result": None}),
    ("multisig_remove, no such wallet", {"id": "m8", "method": "multisig_remove",
                                         "params": {"name": "vault"}},
     {"id": "m8", "error": {"code": -32602, "message": "No multisig wallet named 'vault'"}}),
    *_ms_psbt("r", False),
    ("psbt_sign, an unregistered multisig input", {"id": "r5", "method": "psbt_sign", "params": _MS_SIGN},
     {"id": "r5", "error": {"code": -32602, "message": "input 0 is not a registered multisig wallet's "
                                                       "with this device's key at m/48h/1h/0h/2h/0/0",
                            "data": "unregistered"}}),
]


def main():
    vectors = {
        "description": "Quill protocol v1 wire vectors (SPEC.md). message: the CBOR data model "
                       "as JSON; cbor: its canonical encoding; frame: the whole frame.",
        "magic": MAGIC.hex(),
        "vectors": [{"name": n, "message": m, "cbor": dumps(m).hex(), "frame": frame(dumps(m)).hex()}
                    for n, m in MESSAGES],
    }
    (HERE / "messages.json").write_text(json.dumps(vectors, indent=1, ensure_ascii=True) + "\n")
    signing = {"description": "Quill protocol v1 signing messages (SPEC.md section 7). message: the CBOR "
                              "data model as JSON, a byte string written {\"bytes\": \"<hex>\"}; cbor: its "
                              "canonical encoding; frame: the whole frame.",
               "vectors": [{"name": n, "message": as_json(m), "cbor": dumps(m).hex(),
                            "frame": frame(dumps(m)).hex()} for n, m in SIGNING]}
    (HERE / "signing.json").write_text(json.dumps(signing, indent=1, ensure_ascii=True) + "\n")
    keys = {"description": "Quill protocol v1 seed and key methods (SPEC.md section 9), one exchange "
                           "with a fresh device in order: request, the reply expected (null: not "
                           "fixed, the words are random), each with its canonical CBOR.",
            "vectors": [{"name": n, "request": as_json(q), "request_cbor": dumps(q).hex(),
                         "reply": as_json(r) if r is not None else None,
                         "reply_cbor": dumps(r).hex() if r is not None else None}
                        for n, q, r in KEYS]}
    (HERE / "keys.json").write_text(json.dumps(keys, indent=1, ensure_ascii=True) + "\n")
    psbt = {"description": "Quill protocol v1 PSBT signing with the device's keys (SPEC.md section "
                           "11), one exchange in order: request, the reply expected (null: not "
                           "fixed, session ids and tokens are random), each with its canonical "
                           "CBOR. A txin_token of 16 zero bytes stands for the token the device "
                           "answered for that input in the exchange.",
            "vectors": [{"name": n, "request": as_json(q), "request_cbor": dumps(q).hex(),
                         "reply": as_json(r) if r is not None else None,
                         "reply_cbor": dumps(r).hex() if r is not None else None}
                        for n, q, r in PSBT]}
    (HERE / "psbt.json").write_text(json.dumps(psbt, indent=1, ensure_ascii=True) + "\n")
    multisig = {"description": "Quill protocol v1 multisig wallets (SPEC.md section 12), one exchange in "
                               "order, as psbt.json's: request, the reply expected (null: not fixed), "
                               "each with its canonical CBOR.",
                "vectors": [{"name": n, "request": as_json(q), "request_cbor": dumps(q).hex(),
                             "reply": as_json(r) if r is not None else None,
                             "reply_cbor": dumps(r).hex() if r is not None else None}
                            for n, q, r in MULTISIG]}
    (HERE / "multisig.json").write_text(json.dumps(multisig, indent=1, ensure_ascii=True) + "\n")
    noncanon = {"description": "Byte strings the device's decoder must reject; error: a substring "
                               "of the decoder's message.",
                "vectors": [{"name": n, "cbor": h, "error": e} for n, h, e in NONCANONICAL]}
    (HERE / "cbor_rejected.json").write_text(json.dumps(noncanon, indent=1) + "\n")
    for value, hex_ in VALUES:
        assert dumps(value).hex() == hex_, (value, dumps(value).hex())
    values = {"description": "Canonical CBOR encodings and their values (RFC 8949 Appendix A subset).",
              "vectors": [{"value": v, "cbor": h} for v, h in VALUES]}
    (HERE / "cbor_values.json").write_text(json.dumps(values, indent=1) + "\n")
    stream = {"description": "Byte streams fed in the given chunks to a frame reader with "
                             "max_body 4096, and the events expected: a frame's body (hex) or a "
                             "rejection with the number of bytes dropped. idle: the reader then "
                             "sees no input for longer than its idle timeout.",
              "vectors": [{"name": n, "chunks": [c.hex() for c in chunks], "idle": idle, "events": ev}
                          for n, chunks, idle, ev in streams()]}
    (HERE / "streams.json").write_text(json.dumps(stream, indent=1) + "\n")


if __name__ == "__main__":
    main()
