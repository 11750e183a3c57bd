"""Script verification cost per input (Core's VerifyScript on the host), and the
whole Core script_tests.json / tx_valid.json runs.

    .venv/bin/python -m tests.bench.bench_interpreter
"""
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

from quill.tx.hashes import hash160, sha256  # noqa: E402
from quill.tx.interpreter import verify_script  # noqa: E402
from quill.tx.script_flags import ALL_SCRIPT_VERIFY_FLAGS, STANDARD_SCRIPT_VERIFY_FLAGS, parse_flags  # noqa: E402
from quill.tx.transaction import TxOut  # noqa: E402
from quill.tx.verify import PrecomputedTransactionData, TransactionSignatureChecker, verify_input, verify_transaction  # noqa: E402
from tests.interpreter.coretest import script_test_case, script_test_rows, tx_test_case, tx_test_rows  # noqa: E402
from tests.interpreter.spend import (  # noqa: E402
    bip143_digest,
    ecdsa_sig,
    legacy_digest,
    pubkey,
    schnorr_sig,
    secret,
    spending_tx,
    tap_leaf,
    xonly,
)
from tests.kit.vectors import load_json  # noqa: E402

K1, K2 = secret(31), secret(32)
AMOUNT = 100_000


def p2pkh():
    key = pubkey(K1)
    spk = b"\x76\xa9\x14" + hash160(key) + b"\x88\xac"
    tx = spending_tx()
    sig = ecdsa_sig(K1, legacy_digest(tx, spk))
    tx.vin[0].script_sig = bytes((len(sig),)) + sig + bytes((len(key),)) + key
    return tx, TxOut(AMOUNT, spk)


def p2wpkh():
    key = pubkey(K1)
    tx = spending_tx()
    code = b"\x76\xa9\x14" + hash160(key) + b"\x88\xac"
    tx.vin[0].witness = [ecdsa_sig(K1, bip143_digest(tx, code, AMOUNT)), key]
    return tx, TxOut(AMOUNT, b"\x00\x14" + hash160(key))


def p2wsh_2of2():
    k1, k2 = pubkey(K1), pubkey(K2)
    script = b"\x52\x21" + k1 + b"\x21" + k2 + b"\x52\xae"
    tx = spending_tx()
    d = bip143_digest(tx, script, AMOUNT)
    tx.vin[0].witness = [b"", ecdsa_sig(K1, d), ecdsa_sig(K2, d), script]
    return tx, TxOut(AMOUNT, b"\x00\x20" + sha256(script))


def p2tr_script_path():
    script = b"\x20" + xonly(K1) + b"\xac"
    spk, control, leaf = tap_leaf(script)
    spent = TxOut(AMOUNT, spk)
    tx = spending_tx()
    tx.vin[0].witness = [schnorr_sig(K1, tx, [spent], 0, None, leaf), script, control]
    return tx, spent


def per_call(fn, seconds=0.5):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        n += 1
    return (time.perf_counter() - start) / n


def main():
    rows = []
    for name, make in [("P2PKH", p2pkh), ("P2WPKH", p2wpkh), ("P2WSH 2-of-2", p2wsh_2of2),
                       ("P2TR script path", p2tr_script_path)]:
        tx, spent = make()
        ok, err = verify_input(tx, 0, [spent])
        assert ok, err.message
        data = PrecomputedTransactionData(tx, [spent])
        t = per_call(lambda tx=tx, spent=spent, data=data:
                     verify_input(tx, 0, [spent], STANDARD_SCRIPT_VERIFY_FLAGS, data))
        rows.append((name + " input", t))

    cases = [script_test_case(r) for r in script_test_rows(load_json("core/script_tests.json"))]

    def run_script_tests():
        for c in cases:
            d = PrecomputedTransactionData(c.tx, [c.credit])
            verify_script(c.script_sig, c.script_pubkey, c.witness, c.flags,
                          TransactionSignatureChecker(c.tx, 0, c.amount, d))
    rows.append(("script_tests.json, %d cases" % len(cases), per_call(run_script_tests, 2)))

    txs = [tx_test_case(r) for r in tx_test_rows(load_json("core/tx_valid.json"))]

    def run_tx_valid():
        for tx, spent, flag_text in txs:
            verify_transaction(tx, spent, ALL_SCRIPT_VERIFY_FLAGS & ~parse_flags(flag_text))
    rows.append(("tx_valid.json, %d txs" % len(txs), per_call(run_tx_valid, 2)))

    print("%-36s %12s" % ("verification (CPython, coincurve)", "time"))
    for name, t in rows:
        print("%-36s %9.1f us" % (name, t * 1e6) if t < 0.01 else "%-36s %9.1f ms" % (name, t * 1e3))


if __name__ == "__main__":
    main()
