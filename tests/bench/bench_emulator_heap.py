"""The emulated device's heap at the smallest board's size (97K) through a signing
workload: after each step, the free heap after a collection and the largest block
that can still be allocated (debug_heap: fragmentation, as mem_info's "max free sz"
would show it). A request can only use a block as large as the largest free one,
so that column is what decides whether a large message or script fits.

    .venv/bin/python -m tests.bench.bench_emulator_heap [--heap 97K] [--targets unix,qemu-m4]

unix runs at --heap (the smallest board's); a qemu target at its own board's heap
(qemu-m4: the pyboard's, firmware frozen), skipped when it cannot be built here.
"""
import argparse
import sys
import time

from quill.device.client import DeviceClient
from quill.emulator import qemu
from quill.emulator.launcher import Emulator
from quill.signing.device_session import sign_on_device
from quill.signing.keystore import Key
from quill.signing.solver import SEGWIT_V0, SignRequest
from quill.tx.transaction import TxOut
from tests.signing.signkit import KeyPair, p2wpkh, p2wsh, push, unsigned_tx

KEY = KeyPair(bytes.fromhex("11c0ffee" * 8))
P2PKH_CODE = b"\x76\xa9\x14" + p2wpkh(KEY.pubkey)[2:] + b"\x88\xac"


def _sign(client, info, n_inputs, script_code=P2PKH_CODE, spent_script=None, hash_type=1):
    tx = unsigned_tx(n_inputs, 2, seed=n_inputs)
    spent = [TxOut(10_000, spent_script or p2wpkh(KEY.pubkey))] * n_inputs
    requests = [SignRequest(i, SEGWIT_V0, Key(KEY.secret, True), script_code) for i in range(n_inputs)]
    sign_on_device(client, info, tx, spent, requests, hash_type)


def _max_script(info):
    size = info["limits"]["max_script_size"]
    tail = push(KEY.pubkey) + b"\xac"
    return b"\x61" * (size - len(tail)) + tail


def steps(client, info):
    """(step, action) in order; each action runs, then the heap is measured."""
    big = _max_script(info)
    return [
        ("boot", lambda: None),
        ("get_info", client.get_info),
        ("first session: 1-input P2WPKH", lambda: _sign(client, info, 1)),
        ("20-input P2WPKH", lambda: _sign(client, info, 20)),
        ("200-input P2WPKH", lambda: _sign(client, info, 200)),
        ("500-input P2WPKH", lambda: _sign(client, info, 500)),
        ("witness script of max_script_size", lambda: _sign(client, info, 1, big, p2wsh(big))),
        ("SINGLE, output of max_script_size", lambda: _sign_big_output(client, info, big)),
    ]


def _sign_big_output(client, info, big):
    tx = unsigned_tx(1, 1, seed=7)
    tx.vout[0].script_pubkey = big
    request = SignRequest(0, SEGWIT_V0, Key(KEY.secret, True), P2PKH_CODE)
    sign_on_device(client, info, tx, [TxOut(10_000, p2wpkh(KEY.pubkey))], [request], 3)


def run(target, heap):
    """The table's rows for one target: (step, free, largest, outcome, seconds)."""
    # the smallest board's model on unix (the pyboard: its firmware frozen), at --heap
    with Emulator(heapsize=heap, target=target, board="pyboard" if target == "unix" else None) as emu, \
            DeviceClient(emu.port, short_timeout=60) as client:
        return heap_rows(client, steps(client, client.get_info()))


def heap_rows(client, named_steps):
    """Run each (name, action) step on the device: (step, free, largest, outcome, seconds),
    the heap read with debug_heap after each step, a failing step's error as its outcome."""
    rows = []
    for name, action in named_steps:
        started = time.monotonic()
        try:
            action()
            outcome = "ok"
        except Exception as e:  # noqa: BLE001 (a row of the table, not a crash)
            outcome = f"{type(e).__name__}: {e}"
        seconds = time.monotonic() - started
        free, largest = client.call("debug_heap")
        rows.append((name, free, largest, outcome, seconds))
    return rows


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heap", default="97K")
    parser.add_argument("--targets", default="unix,qemu-m4")
    args = parser.parse_args(argv)
    ok = True
    for target in args.targets.split(","):
        heap = args.heap if target == "unix" else None
        try:
            rows = run(target, heap)
        except qemu.Unavailable as e:
            print(f"{target}: skipped ({e})")
            continue
        print(f"\nEmulated device heap, target {target}, heap {heap or 'of its board'} "
              f"(free and largest block after a collection, bytes)")
        width = max(len(r[0]) for r in rows)
        print(f"{'after':<{width}} | {'free':>6} | {'largest':>7} | {'s':>5} | outcome")
        print(f"{'-' * width}-+--------+---------+-------+--------")
        for name, free, largest, outcome, seconds in rows:
            print(f"{name:<{width}} | {free:>6} | {largest:>7} | {seconds:5.1f} | {outcome}")
        ok = ok and all(r[3] == "ok" for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
