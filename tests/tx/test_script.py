"""Script rendering and classification against core-rpc.md §3.5-§3.8
(Core's ScriptToAsmStr, Solver, InferDescriptor)."""
import pytest

from quill.tx import script as S
from quill.tx.decode import decode_script_univ, script_to_univ, tx_to_univ
from quill.tx.descriptor import infer_descriptor
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut

K1 = "02" + "11" * 32
K2 = "03" + "22" * 32
K3 = "02" + "33" * 32
KU = "04" + "44" * 64
SIG = ("3045022100ae3b4e589dfc9d48cb82d41008dc5fa6a86f94d5c54f9935531924602730ab8002202f88cf4644"
       "14c4ed9fa11b773c5ee944f66e9b05cc1e51d97abc22ce098937ea")


@pytest.mark.parametrize("hexscript, asm", [
    ("", ""),
    ("6a", "OP_RETURN"), ("6a00", "OP_RETURN 0"), ("6aee", "OP_RETURN OP_UNKNOWN"),
    ("6a02ee", "OP_RETURN [error]"), ("02eeee", "-28398"), ("ba", "OP_CHECKSIGADD"),
    ("50", "OP_RESERVED"), ("51024e73", "1 29518"), ("4f", "-1"), ("0181", "-1"), ("0180", "0"),
    ("02ff00", "255"), ("04ffffffff", "-2147483647"), ("4c00", "0"), ("4d0100ff", "-127"),
    ("4e0100000001", "1"), ("4c", "[error]"), ("4d01", "[error]"), ("4e010000", "[error]"),
    ("0500", "[error]"), ("60", "16"), ("ff", "OP_INVALIDOPCODE"), ("bb", "OP_UNKNOWN"),
    ("b1b2b9", "OP_CHECKLOCKTIMEVERIFY OP_CHECKSEQUENCEVERIFY OP_NOP10"),
    ("76a914" + "ab" * 20 + "88ac", "OP_DUP OP_HASH160 " + "ab" * 20 + " OP_EQUALVERIFY OP_CHECKSIG"),
    ("0500000000ff", "00000000ff"),
])
def test_asm(hexscript, asm):
    assert S.script_to_asm(bytes.fromhex(hexscript)) == asm


def test_asm_sighash_decoding_only_in_scriptsig_mode():
    push = bytes([len(SIG) // 2 + 1]) + bytes.fromhex(SIG) + b"\x81"
    assert S.script_to_asm(push, True) == SIG + "[ALL|ANYONECANPAY]"
    assert S.script_to_asm(push, False) == SIG + "81"
    # An undefined hash type, a broken DER and an OP_RETURN script are shown as plain hex.
    for bad in (bytes([len(SIG) // 2 + 1]) + bytes.fromhex(SIG) + b"\x04",
                bytes([len(SIG) // 2 + 1]) + bytes.fromhex("31" + SIG[2:]) + b"\x01"):
        assert "[" not in S.script_to_asm(bad, True)
    assert "[" not in S.script_to_asm(b"\x6a" + push, True)


@pytest.mark.parametrize("hexscript, kind", [
    ("a914" + "00" * 20 + "87", S.SCRIPTHASH),
    ("0014" + "00" * 20, S.WITNESS_V0_KEYHASH),
    ("0020" + "00" * 32, S.WITNESS_V0_SCRIPTHASH),
    ("5120" + "00" * 32, S.WITNESS_V1_TAPROOT),
    ("51024e73", S.ANCHOR),
    ("5102eeee", S.WITNESS_UNKNOWN),
    ("6028" + "00" * 40, S.WITNESS_UNKNOWN),
    ("0015" + "00" * 21, S.NONSTANDARD),
    ("6a", S.NULL_DATA), ("6a0051", S.NULL_DATA), ("6a50", S.NULL_DATA), ("6a61", S.NONSTANDARD),
    ("21" + K1 + "ac", S.PUBKEY), ("41" + KU + "ac", S.PUBKEY),
    ("21" + "04" + "11" * 32 + "ac", S.NONSTANDARD),
    ("76a914" + "00" * 20 + "88ac", S.PUBKEYHASH),
    ("5221" + K1 + "21" + K2 + "52ae", S.MULTISIG),
    ("0111" + "21" + K1 + "51ae", S.NONSTANDARD),       # m=17 > n
    ("0101" + "21" + K1 + "51ae", S.NONSTANDARD),       # non-minimal m
    ("5121" + K1 + "0101ae", S.NONSTANDARD),             # non-minimal n
    ("5121" + K1 + "52ae", S.NONSTANDARD),               # n != number of keys
    ("5121" + K1 + "5151ae", S.NONSTANDARD),             # extra op before OP_CHECKMULTISIG
    ("", S.NONSTANDARD), ("ae", S.NONSTANDARD),
])
def test_solver(hexscript, kind):
    assert S.solver(bytes.fromhex(hexscript))[0] == kind


def test_multisig_with_twenty_keys_as_push():
    keys = "".join("21" + K1 for _ in range(20))
    script = bytes.fromhex("0114" + keys + "0114ae")
    kind, sol = S.solver(script)
    assert kind == S.MULTISIG and sol[0] == b"\x14" and len(sol) == 22


@pytest.mark.parametrize("hexscript, chain, desc", [
    ("", "main", "raw()#58lrscpx"),
    ("6a", "main", "raw(6a)#4mhr9ur5"),
    ("51024e73", "main", "addr(bc1pfeessrawgf)#d6x2lh3c"),
    ("51024e73", "regtest", "addr(bcrt1pfeesnyr2tx)#swxgse0y"),
])
def test_descriptor_examples(hexscript, chain, desc):
    assert infer_descriptor(bytes.fromhex(hexscript), chain) == desc


def test_descriptor_inference_rules():
    def desc(h):
        return infer_descriptor(bytes.fromhex(h), "main").split("#")[0]
    assert desc("21" + K1 + "ac") == f"pk({K1})"
    assert desc("41" + KU + "ac") == f"pk({KU})"
    hybrid = "06" + "44" * 64
    assert desc("41" + hybrid + "ac") == "raw(41" + hybrid + "ac)"
    assert desc("5221" + K1 + "41" + KU + "52ae") == f"multi(2,{K1},{KU})"
    assert desc("5121" + K1 + "41" + hybrid + "52ae").startswith("raw(")
    # x = 1 is on the curve, x = 5 is not (5^3 + 7 = 132 is not a square mod p).
    assert desc("5120" + "00" * 31 + "01") == "rawtr(" + "00" * 31 + "01)"
    assert desc("5120" + "00" * 31 + "05").startswith("addr(bc1p")
    assert desc("5120" + "ff" * 32).startswith("addr(bc1p")   # x >= p


def test_script_to_univ_omits_address_for_pubkey():
    r = script_to_univ(bytes.fromhex("21" + K1 + "ac"), "main")
    assert list(r) == ["asm", "desc", "hex", "type"] and r["type"] == "pubkey"


def test_deprecated_addresses_fields_follow_type():
    ms = bytes.fromhex("5221" + K1 + "21" + K2 + "52ae")
    r = script_to_univ(ms, "main", deprecated_addresses=True)
    assert list(r) == ["asm", "desc", "hex", "type", "addresses", "reqSigs"]
    assert r["reqSigs"] == 2 and len(r["addresses"]) == 2 and r["addresses"][0].startswith("1")
    pkh = bytes.fromhex("76a914" + "00" * 20 + "88ac")
    r = script_to_univ(pkh, "regtest", deprecated_addresses=True)
    assert list(r) == ["asm", "desc", "hex", "address", "type", "addresses", "reqSigs"]
    assert r["addresses"] == [r["address"]] and r["reqSigs"] == 1
    for plain in ("21" + K1 + "ac", "6a00", "ae"):
        r = script_to_univ(bytes.fromhex(plain), "main", deprecated_addresses=True)
        assert "addresses" not in r and "reqSigs" not in r
    assert "addresses" not in script_to_univ(pkh, "main")


def test_decodescript_wrappers():
    ms = bytes.fromhex("5221" + K1 + "21" + K2 + "52ae")
    r = decode_script_univ(ms, "regtest")
    assert r["p2sh"].startswith("2")
    assert r["segwit"]["desc"].startswith(f"wsh(multi(2,{K1},{K2}))#")
    assert r["segwit"]["type"] == S.WITNESS_V0_SCRIPTHASH
    # Uncompressed keys: P2SH only.
    r = decode_script_univ(bytes.fromhex("5141" + KU + "51ae"), "regtest")
    assert "p2sh" in r and "segwit" not in r
    # P2PK is wrapped as P2WPKH of its key.
    r = decode_script_univ(bytes.fromhex("21" + K1 + "ac"), "regtest")
    assert r["segwit"]["type"] == S.WITNESS_V0_KEYHASH and r["desc"].startswith(f"pk({K1})")
    for unwrapped in ("a914" + "00" * 20 + "87", "6a00", "50", "ba", "7e", "5120" + "00" * 32):
        assert "p2sh" not in decode_script_univ(bytes.fromhex(unwrapped), "regtest"), unwrapped


def test_tx_to_univ_coinbase_and_witness_layout():
    cb = Transaction(2, [TxIn(OutPoint(), b"\x03\x01\x02\x03", 0xFFFFFFFF, [bytes(32), b""])],
                     [TxOut(5000000000, bytes.fromhex("0014" + "00" * 20))], 0)
    r = tx_to_univ(cb, "main", include_hex=True, block_hash=bytes(range(32)))
    assert list(r) == ["txid", "hash", "version", "size", "vsize", "weight", "locktime", "vin",
                       "vout", "blockhash", "hex"]
    assert r["vin"] == [{"coinbase": "03010203", "txinwitness": ["00" * 32, ""],
                         "sequence": 4294967295}]
    assert r["vout"][0]["value"].text == "50.00000000"
    assert r["size"] > r["vsize"]
    r = tx_to_univ(cb, "main", is_change=lambda out: True)
    assert list(r["vout"][0]) == ["value", "n", "scriptPubKey", "ischange"]
