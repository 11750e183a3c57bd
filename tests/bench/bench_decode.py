"""Benchmark: decoding transactions in-process and through the RPC server, against python-bitcointx and embit.

    .venv/bin/python -m tests.bench.bench_decode [--quick]

Transactions: (a) 1-input/2-output P2WPKH, (b) 1,000-input/1,000-output P2WPKH.
Rows:
* parse + txid: hex -> transaction object -> txid, for Quill, python-bitcointx
  (CTransaction.deserialize + GetTxid) and embit (Transaction.parse + txid);
  the same hex for all three.
* decoderawtransaction in-process: Quill's handler (parse, render every field,
  compact JSON text) with no transport.
* decoderawtransaction via RPC: the real RPC server in-process on localhost, one
  keep-alive HTTP/1.1 connection, sequential calls; `uptime` gives the transport's
  own cost per request as a baseline.
* decoderawtransaction via RPC under load: a real quilld process and the load
  generator of bench_rpc.py in another process, 1/8/64 concurrent keep-alive
  clients sending transaction (a).
Times are the best of several repeats (per decode); ratios > 1 mean Quill is faster.
"""
import argparse
import time
from types import SimpleNamespace

from quill.handlers.rawtransactions import decoderawtransaction
from quill.rpc import univalue
from quill.tx.decode import decode_hex_tx
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut

CTX = SimpleNamespace(node=SimpleNamespace(chain_name="main", deprecated_rpc=frozenset()))


def p2wpkh_tx(n_in, n_out):
    sig = bytes.fromhex("30440220" + "5a" * 32 + "0220" + "3c" * 32 + "01")
    vin = [TxIn(OutPoint(i.to_bytes(4, "little") * 8, i % 3), b"", 0xFFFFFFFD,
                [sig, b"\x02" + i.to_bytes(4, "big") * 8]) for i in range(n_in)]
    vout = [TxOut(10_000 + i, b"\x00\x14" + i.to_bytes(4, "big") * 5) for i in range(n_out)]
    return Transaction(2, vin, vout, 0).serialize().hex()


def best_of(fn, repeats, number):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def quill_parse(hx):
    return decode_hex_tx(hx).txid()


def bitcointx_parse(hx):
    from bitcointx.core import CTransaction
    return CTransaction.deserialize(bytes.fromhex(hx)).GetTxid()


def embit_parse(hx):
    from embit.transaction import Transaction as ETransaction
    return ETransaction.parse(bytes.fromhex(hx)).txid()


def quill_decode(hx):
    return univalue.dumps(decoderawtransaction(CTX, [hx, None]))


def fmt(seconds):
    return f"{seconds * 1e6:10.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:10.2f} ms"


def main():
    parser = argparse.ArgumentParser(description="decode benchmark")
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    cases = [("(a) 1-in/2-out P2WPKH", p2wpkh_tx(1, 2), 2000),
             ("(b) 1000-in/1000-out", p2wpkh_tx(1000, 1000), 5)]
    rows = []
    for label, hx, number in cases:
        # All three libraries must agree on the txid before being timed.
        txid = decode_hex_tx(hx).txid()
        assert bitcointx_parse(hx) == txid          # internal byte order
        assert embit_parse(hx) == txid[::-1]        # embit returns the display order
        q = best_of(lambda hx=hx: quill_parse(hx), repeats, number)
        b = best_of(lambda hx=hx: bitcointx_parse(hx), repeats, max(1, number // 2))
        e = best_of(lambda hx=hx: embit_parse(hx), repeats, max(1, number // 2))
        d = best_of(lambda hx=hx: quill_decode(hx), repeats, max(1, number // 2))
        rows.append((label, len(hx) // 2, q, b, e, d))

    from tests.rpc_decode.rpc_harness import InProcessServer
    rpc = []
    with InProcessServer("main") as server:
        client = server.connection()
        # Transport baseline: a call that does no work (the server's own cost per request).
        client.call_raw("uptime", [])
        start = time.perf_counter()
        for _ in range(2000):
            client.call_raw("uptime", [])
        elapsed = time.perf_counter() - start
        rpc.append(("baseline: uptime", elapsed / 2000, 2000 / elapsed))
        for label, hx, number in cases:
            calls = 2000 if number > 100 else 20
            status, _ = client.call_raw("decoderawtransaction", [hx])
            assert status == 200
            start = time.perf_counter()
            for _ in range(calls):
                client.call_raw("decoderawtransaction", [hx])
            elapsed = time.perf_counter() - start
            rpc.append((label, elapsed / calls, calls / elapsed))
        client.close()

    print(f"{'transaction':24} {'bytes':>7} | {'quill parse+txid':>16} {'bitcointx':>13} {'embit':>13} "
          f"| {'vs bitcointx':>12} {'vs embit':>9} | {'quill decoderawtx':>17}")
    for label, size, q, b, e, d in rows:
        print(f"{label:24} {size:7d} | {fmt(q):>16} {fmt(b):>13} {fmt(e):>13} "
              f"| {b / q:11.1f}x {e / q:8.1f}x | {fmt(d):>17}")
    print()
    print(f"{'transaction':24} | {'RPC per call':>13} {'decodes/s':>10}   (keep-alive, sequential)")
    for label, per, rate in rpc:
        print(f"{label:24} | {fmt(per):>13} {rate:10.0f}")
    print()
    print_concurrent_rpc(cases[0][1])


def print_concurrent_rpc(hx):
    """Transaction (a) through a real quilld, loaded from another process."""
    import json
    import tempfile

    from tests.bench.bench_rpc import load
    from tests.kit.rpc_daemon import QuillDaemon
    body = json.dumps({"jsonrpc": "1.0", "id": "b", "method": "decoderawtransaction", "params": [hx]})
    print(f"{'(a) via quilld, clients':24} | {'decodes/s':>10} {'p50 ms':>7} {'p99 ms':>7}   (separate load process)")
    with tempfile.TemporaryDirectory() as tmp, QuillDaemon(tmp) as d:
        for clients in (1, 8, 64):
            r = load(d.port, d.proc.pid, d.auth_header(), body, clients, 3.0)
            print(f"{clients:24d} | {r['rps']:10.0f} {r['p50']:7.2f} {r['p99']:7.2f}")


if __name__ == "__main__":
    main()
