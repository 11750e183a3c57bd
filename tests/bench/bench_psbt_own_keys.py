"""PSBT signing with the device's own keys (protocol/SPEC.md §11), the way
`quill-signer signtx` does it: pyserial -> quill-emu (real MicroPython) started
with the BIP39 test mnemonic, for P2WPKH PSBTs of several sizes whose inputs
pay m/84h/1h/0h/0/i, each with its previous transaction. Prints total and
per-input time and the bytes sent to the device per input, for each heap;
bench_signing_e2e prints signrawtransactionwithkey's figures beside which to
read them (the same streamed session underneath, plus the previous
transactions and a key derivation per input).

    .venv/bin/python -m tests.bench.bench_psbt_own_keys [--heap 120K] [--heap 97K] [--quick]
"""
from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quill.signing.psbt_own_keys import sign_psbt_with_device
from quill.tx.hashes import hash160
from quill.tx.psbt import PSBT, KeyOrigin, psbt_from_tx
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quillfw.keys import bip32
from tests.keys.emulated import TEST_MNEMONIC, EmulatedDevice

SIZES = (1, 10, 100, 500)
QUICK = (1, 10)
AMOUNT = 50_000
FINGERPRINT = bytes.fromhex("73c5da0a")


def _receive_keys(n: int) -> list[bytes]:
    seed = hashlib.pbkdf2_hmac("sha512", TEST_MNEMONIC.encode(), b"mnemonic", 2048)
    node = bip32.master_node(seed)
    for index in bip32.parse_path("m/84h/1h/0h/0"):
        node = node.child(index)
    return [node.child(i).pubkey() for i in range(n)]


def build(n: int) -> PSBT:
    pubkeys = _receive_keys(n)
    prevs = []
    for i, pub in enumerate(pubkeys):
        spk = b"\x00\x14" + hash160(pub)
        prevs.append(Transaction(2, [TxIn(OutPoint(i.to_bytes(32, "little"), 0), b"\x51", 0xFFFFFFFF)],
                                 [TxOut(AMOUNT, spk)], 0))
    pay = b"\x00\x14" + bytes(20)
    tx = Transaction(2, [TxIn(OutPoint(p.txid(), 0), b"", 0xFFFFFFFD) for p in prevs],
                     [TxOut(n * AMOUNT - 1000, pay)], 0)
    psbt = psbt_from_tx(tx)
    for i, (txin, prev, pub) in enumerate(zip(psbt.inputs, prevs, pubkeys, strict=True)):
        txin.non_witness_utxo = prev
        txin.witness_utxo = prev.vout[0]
        txin.hd_keypaths[pub] = KeyOrigin(FINGERPRINT, (84 | bip32.HARDENED, 1 | bip32.HARDENED,
                                                        bip32.HARDENED, 0, i))
    return psbt


def run(heap: str, sizes: tuple[int, ...], work: Path) -> list[tuple[str, int, str, str, str]]:
    rows = []
    with EmulatedDevice(work / heap, f"--test-mnemonic={TEST_MNEMONIC}", f"--heapsize={heap}") as device:
        for n in sizes:
            psbt = build(n)
            stats: dict[str, int] = {}
            with DeviceClient(device.port) as client:
                try:
                    info = client.get_info()
                    started = time.perf_counter()
                    signed = sign_psbt_with_device(client, info, psbt, FINGERPRINT, "regtest", stats)
                except DeviceError as e:
                    rows.append((heap, n, f"failed: {e.message}", "", ""))
                    continue
                seconds = time.perf_counter() - started
            assert signed == n
            rows.append((heap, n, f"{seconds:.2f}", f"{seconds * 1000 / n:.1f}",
                         f"{stats['bytes_sent'] / n:.0f}"))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--heap", action="append")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    heaps = args.heap or ["120K", "112K", "97K"]
    sizes = QUICK if args.quick else SIZES
    print("| heap | P2WPKH inputs | seconds | ms per input | bytes to the device per input |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for heap in heaps:
            for row in run(heap, sizes, Path(tmp)):
                print("| " + " | ".join(str(x) for x in row) + " |", flush=True)


if __name__ == "__main__":
    main()
