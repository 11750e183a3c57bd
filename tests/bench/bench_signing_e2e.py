"""signrawtransactionwithkey end to end: quilld -> pyserial -> quill-emu (real
MicroPython modelling the pyboard: 97K heap, firmware frozen), for P2WPKH and P2PKH transactions of
several sizes. Prints total and per-input time, the device's CPU time and the
part of it spent collecting garbage per input (perf on the firmware's process:
tests/bench/gc_profile.py; "n/a" without perf), the bytes sent to the device
per input beside the lower bound (the bytes the input's sighash covers), and
a host-only coincurve signing of the same transactions (Core's procedure) as
the floor.

    .venv/bin/python -m tests.bench.bench_signing_e2e [--board pyboard] [--crypto auto] [--quick]

--board rpi_pico is the default emulated device (quilld -device=emulator); --crypto python signs
with the pure-MicroPython arithmetic where the board's model would load the native module.
"""
import argparse
import re
import tempfile
import time

from quillfw.sighash import legacy as sighash_legacy
from quillfw.sighash import segwit_v0 as sighash_segwit_v0
from quillfw.sighash.txdigests import TxDigests
from tests.bench.gc_profile import DeviceProfile
from tests.kit.rpc_daemon import QuillDaemon
from tests.signing.signkit import core_sign, firmware_pid, keys, p2pkh, p2wpkh, prevtx, unsigned_tx

CASES = [("P2WPKH", 1), ("P2WPKH", 10), ("P2WPKH", 100), ("P2WPKH", 500),
         ("P2PKH", 1), ("P2PKH", 10), ("P2PKH", 50)]
QUICK = [("P2WPKH", 1), ("P2WPKH", 10), ("P2PKH", 1), ("P2PKH", 10)]
AMOUNT = 50_000


def build(kind, n):
    key = keys(77, 1)[0]
    spk = p2wpkh(key.pubkey) if kind == "P2WPKH" else p2pkh(key.pubkey)
    tx = unsigned_tx(n, 2, seed=n)
    entries = [prevtx(tx, i, spk, AMOUNT) for i in range(n)]
    return key, spk, tx, entries


def lower_bound(kind, tx, spk):
    """Bytes per input the input's sighash covers. BIP143: the input's outpoint,
    sequence, amount and scriptPubKey, plus a share of the outputs. Legacy: the
    whole transaction again (with the script code) for every signature."""
    outputs = sum(8 + 1 + len(o.script_pubkey) for o in tx.vout)
    n = len(tx.vin)
    if kind == "P2WPKH":
        return (n * (36 + 4 + 8 + 1 + len(spk)) + outputs + 8) / n
    unsigned = len(tx.serialize())
    return unsigned + len(spk) + 36 + 4 + 8


def host_floor(kind, key, spk, tx):
    """Core's signing procedure on libsecp256k1 with the firmware's sighash code."""
    inputs = [(i.prevout.hash, i.prevout.n, i.sequence) for i in tx.vin]
    outputs = [(o.value, o.script_pubkey) for o in tx.vout]
    started = time.perf_counter()
    if kind == "P2WPKH":
        d = TxDigests.from_tx(tx.version, inputs, outputs, tx.locktime, [(AMOUNT, spk)] * len(inputs))
        code = p2pkh(key.pubkey)
        for i, (txid, vout, seq) in enumerate(inputs):
            core_sign(key.secret, sighash_segwit_v0.sighash(d, i, txid, vout, seq, code, AMOUNT, 1, None))
    else:
        for i in range(len(inputs)):
            core_sign(key.secret, sighash_legacy.sighash_tx(tx.version, inputs, outputs, tx.locktime,
                                                           i, spk, 1))
    return time.perf_counter() - started


_LINE = re.compile(r"signrawtransactionwithkey: (\d+) inputs, (\d+) device signatures, "
                   r"(\d+) messages, (\d+) bytes to the device")


def last_link_stats(daemon):
    found = _LINE.findall(daemon.debug_log())
    return tuple(int(x) for x in found[-1]) if found else None


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--board", default="pyboard", help="the board modelled (default: the smallest)")
    parser.add_argument("--crypto", default="auto", choices=("auto", "python"),
                        help="python: the pure-MicroPython arithmetic (quill-emu --crypto)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with QuillDaemon(tmp, "-device=emulator", f"-emuboard={args.board}", "-debug=signing",
                         *_crypto_option(args.crypto)) as d:
            info = d.rpc("getdeviceinfo")
            print(f"device: {info['board']}, heap_free at boot {info['heap_free']} B, "
                  f"max_message_size {info['max_message_size']}, crypto {info.get('crypto_backend')}")
            pid = firmware_pid(d)
            for kind, n in (QUICK if args.quick else CASES):
                key, spk, tx, entries = build(kind, n)
                with DeviceProfile(pid) as profile:
                    started = time.perf_counter()
                    result = d.rpc("signrawtransactionwithkey", tx.hex(), [key.wif], entries)
                    elapsed = time.perf_counter() - started
                assert result["complete"] is True, result.get("errors", [])[:1]
                _, sigs, messages, sent = last_link_stats(d)
                assert sigs == n
                floor = host_floor(kind, key, spk, tx)
                rows.append((kind, n, elapsed, elapsed / n * 1000, _per(profile.cpu_ms, n),
                             _per(profile.gc_ms, n), messages, sent / n,
                             lower_bound(kind, tx, spk), floor * 1000, floor / n * 1000))
    head = ("type", "inputs", "total s", "ms/input", "device CPU ms/input", "GC ms/input", "messages",
            "B sent/input", "lower bound B/input", "host floor ms", "floor ms/input")
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for kind, n, total, per, cpu, gc_ms, messages, sent, lb, floor, floor_per in rows:
        print(f"{kind} | {n} | {total:.2f} | {per:.1f} | {cpu} | {gc_ms} | {messages} | {sent:.0f} | "
              f"{lb:.0f} | {floor:.1f} | {floor_per:.2f}")


def _per(ms, n):
    """ms per input, as the table writes it ("n/a" when perf could not sample the device)."""
    return "n/a" if ms is None else f"{ms / n:.2f}"


def _crypto_option(crypto):
    return [] if crypto == "auto" else [f"-emucrypto={crypto}"]


if __name__ == "__main__":
    main()
