"""Multisig PSBT signing on the device (protocol/SPEC.md §12) beside single-sig, the way
`quill-signer signtx` does it: pyserial -> quill-emu (real MicroPython) started with the BIP39
test mnemonic, which registers 2-of-3 wallets (wsh(sortedmulti), sh(wsh(multi)), sh(multi)) and
wallets of 7 and 10 cosigners (10: the device's limit), then signs PSBTs whose inputs are those
wallets' receive outputs /0/i, each with its previous transaction, and a P2WPKH PSBT of the same
size. The firmware is frozen as the smallest board runs it (tests/keys/emulated.py). Prints
per-input time and the bytes sent to the device per input, per heap, and the time a
registration takes (it derives the device's own key at the cosigner's origin and the first
address: a point multiplication per cosigner per step).

    .venv/bin/python -m tests.bench.bench_psbt_multisig [--heap 97K] [--inputs 10]
"""
from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from pathlib import Path

from quill.device import multisig as device_multisig
from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quill.signer.multisig import registration
from quill.signing.psbt_own_keys import sign_psbt_with_device
from quill.tx.hashes import hash160
from quill.tx.psbt import PSBT, KeyOrigin, psbt_from_tx
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.wallet.bip32 import HARDENED, master_from_seed
from quill.wallet.descriptors import parse
from tests.keys.emulated import SMALLEST_BOARD, TEST_MNEMONIC, EmulatedDevice

AMOUNT = 50_000
ACCOUNT = (48 | HARDENED, 1 | HARDENED, HARDENED, 2 | HARDENED)
WALLETS = (("wsh 2-of-3", "wsh(sortedmulti(2,{}))", 3), ("sh-wsh 2-of-3", "sh(wsh(multi(2,{})))", 3),
           ("sh 2-of-3", "sh(multi(2,{}))", 3), ("wsh 2-of-7", "wsh(sortedmulti(2,{}))", 7),
           ("wsh 5-of-10", "wsh(sortedmulti(5,{}))", 10), ("wsh 10-of-10", "wsh(sortedmulti(10,{}))", 10))


def _account(seed: bytes) -> tuple[bytes, str]:
    master = master_from_seed(seed)
    node = master
    for step in ACCOUNT:
        node = node.derive(step)
    return master.neuter().fingerprint(), node.neuter().serialize("regtest")


def cosigner_keys(n: int) -> list[str]:
    """The device's BIP48 key first, then n - 1 others (seeds made here)."""
    seeds = [hashlib.pbkdf2_hmac("sha512", TEST_MNEMONIC.encode(), b"mnemonic", 2048)]
    seeds += [hashlib.sha512(b"cosigner %d" % i).digest() for i in range(1, n)]
    keys = []
    for seed in seeds:
        fingerprint, xpub = _account(seed)
        keys.append(f"[{fingerprint.hex()}/48h/1h/0h/2h]{xpub}")
    return keys


def _spend(prevs: list[Transaction], n: int) -> PSBT:
    tx = Transaction(2, [TxIn(OutPoint(p.txid(), 0), b"", 0xFFFFFFFD) for p in prevs],
                     [TxOut(n * AMOUNT - 5000, b"\x00\x14" + bytes(20))], 0)
    psbt = psbt_from_tx(tx)
    for txin, prev in zip(psbt.inputs, prevs, strict=True):
        txin.non_witness_utxo = prev
        txin.witness_utxo = prev.vout[0]
    return psbt


def _prev(i: int, spk: bytes) -> Transaction:
    return Transaction(2, [TxIn(OutPoint(i.to_bytes(32, "little"), 0), b"\x51", 0xFFFFFFFF)],
                       [TxOut(AMOUNT, spk)], 0)


def build_multisig(template: str, keys: list[str], n: int) -> PSBT:
    desc = parse(template.format(",".join(k + "/0/*" for k in keys)), "regtest")
    node = desc.node
    multi = node.sub.sub if node.sub.kind == "wsh" and node.kind == "sh" else node.sub
    psbt = _spend([_prev(i, desc.script(i)) for i in range(n)], n)
    for i, txin in enumerate(psbt.inputs):
        script = multi.script(i)
        if node.kind == "wsh" or node.sub.kind == "wsh":
            txin.witness_script = script
            if node.kind == "sh":
                txin.redeem_script = b"\x00\x20" + hashlib.sha256(script).digest()
        else:
            txin.redeem_script = script
        for key in multi.keys:
            fingerprint, path = key.origin_at(i)
            txin.hd_keypaths[key.pubkey(i)] = KeyOrigin(fingerprint, tuple(path))
    return psbt


def build_single(n: int) -> PSBT:
    seed = hashlib.pbkdf2_hmac("sha512", TEST_MNEMONIC.encode(), b"mnemonic", 2048)
    master = master_from_seed(seed)
    account = master
    for step in (84 | HARDENED, 1 | HARDENED, HARDENED, 0):
        account = account.derive(step)
    pubs = [account.derive(i).neuter().pubkey for i in range(n)]
    psbt = _spend([_prev(i, b"\x00\x14" + hash160(pub)) for i, pub in enumerate(pubs)], n)
    for i, (txin, pub) in enumerate(zip(psbt.inputs, pubs, strict=True)):
        txin.hd_keypaths[pub] = KeyOrigin(master.neuter().fingerprint(),
                                          (84 | HARDENED, 1 | HARDENED, HARDENED, 0, i))
    return psbt


def _sign(client: DeviceClient, psbt: PSBT, n: int) -> tuple[str, str]:
    stats: dict[str, int] = {}
    started = time.perf_counter()
    try:
        signed = sign_psbt_with_device(client, client.get_info(), psbt,
                                       bytes.fromhex(cosigner_keys(1)[0][1:9]), "regtest", stats)
    except DeviceError as e:
        return f"failed: {e.message}", ""
    assert signed == n
    seconds = time.perf_counter() - started
    return f"{seconds * 1000 / n:.0f}", f"{stats['bytes_sent'] / n:.0f}"


def run(heap: str, n: int, work: Path) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    with EmulatedDevice(work / heap, f"--test-mnemonic={TEST_MNEMONIC}", f"--heapsize={heap}",
                        board=SMALLEST_BOARD) as device, \
            DeviceClient(device.port) as client:
        rows.append((heap, "P2WPKH (single-sig)", "", *_sign(client, build_single(n), n),
                     str(client.get_info()["heap_free"])))
        for name, template, size in WALLETS:
            keys = cosigner_keys(size)
            wallet = registration([template.format(",".join(k + "/<0;1>/*" for k in keys))],
                                  name.replace(" ", "")[:16], "regtest", "regtest")
            started = time.perf_counter()
            try:
                device_multisig.register(client, wallet)
            except DeviceError as e:
                rows.append((heap, name, f"failed: {e.message}", "", "",
                             str(client.get_info()["heap_free"])))
                continue
            registered = f"{time.perf_counter() - started:.1f}"
            rows.append((heap, name, registered, *_sign(client, build_multisig(template, keys, n), n),
                         str(client.get_info()["heap_free"])))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--heap", action="append")
    parser.add_argument("--inputs", type=int, default=10)
    args = parser.parse_args(argv)
    print(f"{args.inputs} inputs per PSBT, each with its previous transaction")
    print("| heap | inputs | registration (s) | ms per input | bytes to the device per input | "
          "free heap after |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for heap in args.heap or ["97K"]:
            for row in run(heap, args.inputs, Path(tmp)):
                print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
