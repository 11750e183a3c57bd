"""Where the native module's Cortex-M0+ cycles go, per function, in one ECDSA signature
at 2 nonces (the Pico's module on qemu-m0plus).

    .venv/bin/python -m tests.bench.bench_natmod_functions [--gen-kb 22] [--window 6] [--source DIR]

Builds the module like quill.emulator.natmod (same sources, same make line) in a kept
directory with mpy_ld's verbose log, which gives each object's section addresses in
the linked text; each object's `nm` gives its functions' offsets there. The signature
is traced as tests/bench/m0plus_cycles.native_signature does, the firmware printing the
address of one of the module's function objects (the load base), and every executed
instruction is weighed with the Cortex-M0+ table and attributed to the function it
lies in (exclusive: a callee's cycles are the callee's). libsecp256k1's static
functions are inlined where GCC chose to: their cost shows in their caller.
--source: another revision's firmware/natmod/quill_secp256k1 (before/after).
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from quill.emulator import mcu_bench, natmod
from tests.bench import m0plus_cycles

SECTION = re.compile(r"^  ([0-9a-f]{8}) (\S+) size=(\d+)$")


def build(work: Path, gen_kb: int, window: int, source: Path) -> tuple[Path, m0plus_cycles.ModuleMap]:
    """The armv6m module built in work, and its function map."""
    micropython = natmod._unpacked("MICROPYTHON_SRC", "micropython")
    secp256k1 = natmod._unpacked("SECP256K1_SRC", "secp256k1")
    for path in source.iterdir():
        (work / path.name).write_bytes(path.read_bytes())
    proc = subprocess.run(["make", "ARCH=armv6m", f"MPY_DIR={micropython}", f"SECP256K1_DIR={secp256k1}",
                           f"PYTHON={sys.executable}", f"ECMULT_GEN_KB={gen_kb}",
                           f"ECMULT_WINDOW_SIZE={window}", "V=1"], cwd=work, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    log = proc.stdout + proc.stderr
    link = next(line for line in log.splitlines() if "--qstrs" in line and "mpy_ld" in line)
    objects = [work / w for w in link.split() if w.endswith(".o")]
    found = (SECTION.match(line) for line in log.splitlines())
    sections = [(int(m.group(1), 16), m.group(2)) for m in found if m and int(m.group(3))]
    texts = [a for a, n in sections if n == ".text"]
    functions: list[tuple[int, str]] = []
    with_text = [o for o in objects if _has_text(o)]
    for obj, base in zip(with_text, texts, strict=False):
        for offset, kind, name in _nm(obj):
            if kind in "tT":
                functions.append((base + (offset & ~1), name))
    for base in texts[len(with_text):]:
        functions.append((base, "libgcc"))
    rel_ro = next(a for a, n in sections if n == ".data.rel.ro")   # the first object's: ours
    anchor = next(o for o, k, n in _nm(objects[0]) if n == "ecdsa_sign_obj")
    return work / f"{natmod.MODULE}.mpy", m0plus_cycles.ModuleMap(sorted(functions), rel_ro + anchor)


def _has_text(obj: Path) -> bool:
    out = subprocess.run(["arm-none-eabi-size", "-A", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    return any(line.split()[:1] == [".text"] and int(line.split()[1]) > 0 for line in out.splitlines())


def _nm(obj: Path) -> list[tuple[int, str, str]]:
    out = subprocess.run(["arm-none-eabi-nm", str(obj)], capture_output=True, text=True, check=True).stdout
    return [(int(p[0], 16), p[1], p[2]) for p in (line.split() for line in out.splitlines()) if len(p) == 3]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gen-kb", type=int, default=22)
    ap.add_argument("--window", type=int, default=6)
    ap.add_argument("--source", type=Path, default=natmod.SOURCE_DIR)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        module, functions = build(Path(tmp), args.gen_kb, args.window, args.source)
        hist = m0plus_cycles.native_signature(mcu_bench.pairs_taking(2, 1), module=module, functions=functions)
    total_i, total_c = hist.total(), hist.total("cycles")
    hz = mcu_bench.clock_hz("qemu-m0plus")
    print(f"native ECDSA at 2 nonces ({args.gen_kb} KB comb): {total_i:,} instructions, {total_c:,} cycles, "
          f"{1000 * total_c / hz:.2f} ms at {hz / 1e6:g} MHz")
    per: dict[str, list[int]] = {}
    for (region, _), n in hist.instructions.items():
        per.setdefault(region, [0, 0])[0] += n
    for (region, _), c in hist.cycles.items():
        per[region][1] += c
    print("%-44s %11s %11s %6s" % ("function", "instr", "cycles", "share"))
    for name, (i, c) in sorted(per.items(), key=lambda kv: -kv[1][1])[:args.top]:
        print("%-44s %11s %11s %5.1f%%" % (name, f"{i:,}", f"{c:,}", 100 * c / total_c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
