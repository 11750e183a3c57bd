"""Consecutive mixed transactions signed through quilld (issue 11's memory soak):
1 to 200 inputs (log-uniform, so most are small), every script type, random
sighash types; every call must come back complete (quilld verifies every signature
with its script interpreter before it says so), with no out-of-memory error.

    .venv/bin/python -m tests.signing.mixed_soak --count 1000 [--target qemu-m0plus] [--heap 97K]

prints the figures (transactions, inputs, signatures, failures by message, time);
--each logs every transaction's shape and seconds (where a slow target's time goes).
"""
import argparse
import math
import random
import sys
import tempfile
import time
from collections import Counter

from quill.tx.decode import decode_hex_tx
from quill.tx.script import is_valid_signature_encoding, iter_ops
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.signing.signkit import keys, multisig, p2pk, p2pkh, p2sh, p2tr, p2wpkh, p2wsh, prevtx, unsigned_tx

K = keys(4242, 6)
MS = multisig(1, [K[4].pubkey, K[5].pubkey])
# (name, scriptPubKey, redeemScript, witnessScript)
TYPES = [
    ("p2pk", p2pk(K[0].pubkey), None, None),
    ("p2pkh", p2pkh(K[1].pubkey), None, None),
    ("p2wpkh", p2wpkh(K[2].pubkey), None, None),
    ("p2sh-p2wpkh", p2sh(p2wpkh(K[3].pubkey)), p2wpkh(K[3].pubkey), None),
    ("p2wsh-multisig", p2wsh(MS), None, MS),
    ("p2sh-multisig", p2sh(MS), MS, None),
    ("p2tr-bip86", p2tr(K[0].bip86_output_key()), None, None),
]
WIFS = [k.wif for k in K]
SIGHASHES = ["ALL", "ALL", "DEFAULT", "ALL|ANYONECANPAY", "NONE", "SINGLE"]
# legacy inputs re-stream the whole transaction per signature: cap them in large ones
MAX_LEGACY = 40
# How long one call may take, from its size and the target's speed: a flat 60 s stopped
# the Cortex-M0+ soak at its 4th transaction under load (slowness, not a failure). Seconds
# per input (a signature and its streaming) and per input re-streamed for a legacy
# signature; generous, as they only bound a hang.
SECONDS_PER_INPUT = {"unix": 2.0, "qemu-m0plus": 20.0, "qemu-m4": 20.0}
SECONDS_PER_RESTREAMED_INPUT = {"unix": 0.05, "qemu-m0plus": 1.0, "qemu-m4": 1.0}
LEGACY_TYPES = ("p2pk", "p2pkh", "p2sh-multisig")


def transaction(rng, max_inputs=200):
    n = max(1, min(max_inputs, int(math.exp(rng.uniform(0, math.log(max_inputs + 1))))))
    sighash = rng.choice(SIGHASHES)
    if sighash == "SINGLE" and n > 3:
        sighash = "ALL"
    # SINGLE signs input i with output i: give every input its output (else Core leaves it unsigned)
    n_outputs = n if sighash == "SINGLE" else rng.randint(1, 3)
    tx = unsigned_tx(n, n_outputs, seed=rng.getrandbits(32))
    kinds = [rng.choice(TYPES) for _ in range(n)]
    legacy = [i for i, k in enumerate(kinds) if k[0] in ("p2pk", "p2pkh", "p2sh-multisig")]
    for i in legacy[MAX_LEGACY:]:
        kinds[i] = TYPES[2]
    if sighash == "DEFAULT":
        kinds = [k if k[0] == "p2tr-bip86" else TYPES[6] for k in kinds]
    entries = [prevtx(tx, i, spk, 10_000 + i, redeem, witness) for i, (_, spk, redeem, witness) in enumerate(kinds)]
    n_legacy = sum(1 for k in kinds if k[0] in LEGACY_TYPES)
    return tx, entries, sighash, n_legacy


def signatures_in(signed_hex):
    """The signatures a signed transaction carries: strict-DER ECDSA signatures pushed in
    its scriptSigs and witnesses, and key-path Schnorr signatures (a witness of one 64- or
    65-byte item). quilld verified each script before it said complete."""
    count = 0
    for txin in decode_hex_tx(signed_hex).vin:
        if len(txin.witness) == 1 and len(txin.witness[0]) in (64, 65):
            count += 1
            continue
        items = [data for _, data in iter_ops(txin.script_sig) if data] + list(txin.witness)
        count += sum(1 for item in items if is_valid_signature_encoding(item))
    return count


def budget(target, n_inputs, n_legacy):
    """Seconds one signrawtransactionwithkey of this shape may take on target."""
    per_input = SECONDS_PER_INPUT.get(target, SECONDS_PER_INPUT["qemu-m0plus"])
    restream = SECONDS_PER_RESTREAMED_INPUT.get(target, SECONDS_PER_RESTREAMED_INPUT["qemu-m0plus"])
    return 60 + per_input * n_inputs + restream * n_inputs * n_legacy


def soak(node, count, seed=2026, max_inputs=200, log=None, target="unix", stop=None, each=False):
    """stop(): True to end before the next transaction (the figures so far are returned);
    each: log every transaction (inputs, legacy inputs, sighash, seconds)."""
    rng = random.Random(seed)
    figures = Counter()
    failures = Counter()
    started = time.monotonic()
    for n in range(count):
        if stop is not None and stop():
            break
        tx, entries, sighash, n_legacy = transaction(rng, max_inputs)
        figures["transactions"] += 1
        figures["inputs"] += len(tx.vin)
        failure = None
        began = time.monotonic()
        try:
            result = node.rpc("signrawtransactionwithkey", tx.hex(), WIFS, entries, sighash,
                              timeout=budget(target, len(tx.vin), n_legacy))
            if result.get("complete") is not True:
                failure = "incomplete: " + str(result.get("errors", [{}])[0].get("error"))
            else:
                figures["signatures"] += signatures_in(result["hex"])
        except RPCFailure as e:
            failure = f"{e.code} {e.message}"
        except OSError:    # the HTTP answer did not come within the budget
            failure = "no answer within the budget"
        if each and log:
            log(f"transaction {n + 1}: {len(tx.vin)} inputs, {n_legacy} legacy, {sighash}, "
                f"{time.monotonic() - began:.1f} s")
        if failure is not None:
            failures[failure] += 1
            if log:
                log(f"transaction {n + 1} ({len(tx.vin)} inputs, {sighash}): {failure}")
        if log and ((n + 1) % 50 == 0 or (target != "unix" and (n + 1) % 10 == 0)):
            log(f"{n + 1} transactions, {figures['inputs']} inputs, {figures['signatures']} signatures, "
                f"{sum(failures.values())} failures, {time.monotonic() - started:.0f} s")
    figures["seconds"] = round(time.monotonic() - started)
    return figures, failures


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--target", default="unix")
    parser.add_argument("--board", default=None, help="-emuboard: the board modelled on the unix target "
                                                   "(default: quilld's, the Pico)")
    parser.add_argument("--heap", default=None, help="-emuheap, an experiment (default: the board's)")
    parser.add_argument("--max-inputs", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop starting transactions after this long and print the figures")
    parser.add_argument("--each", action="store_true", help="log every transaction's shape and time")
    args = parser.parse_args(argv)
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    options = ["-device=emulator", f"-emutarget={args.target}"]
    if args.target != "unix":
        # a ping or a batch waits for the emulated MCU as the machine lets QEMU run: under
        # load the daemon's 30 s for a qemu target failed calls that were only slow
        options.append(f"-devicetimeout={int(SECONDS_PER_INPUT[args.target] * 15)}")
    if args.board:
        options.append(f"-emuboard={args.board}")
    if args.heap:
        options.append(f"-emuheap={args.heap}")
    with tempfile.TemporaryDirectory() as tmp, QuillDaemon(tmp, *options) as node:
        figures, failures = soak(node, args.count, max_inputs=args.max_inputs,
                                 log=lambda s: print(s, flush=True), target=args.target,
                                 stop=deadline and (lambda: time.monotonic() > deadline), each=args.each)
    print(dict(figures), dict(failures) or "no failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
