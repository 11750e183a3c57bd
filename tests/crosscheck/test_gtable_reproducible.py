"""The committed comb table is exactly what tools/gen_gtable.py generates."""
from pathlib import Path

from tools import gen_gtable as gen

ROOT = Path(__file__).resolve().parents[2]


def test_committed_table_matches_generator():
    committed = (ROOT / "firmware" / "quillfw" / "crypto" / "secp256k1_gtable.py").read_text()
    assert gen.render_module(gen.build_table()) == committed


def test_table_entries_are_the_signed_comb_sums():
    from quillfw.crypto import secp256k1 as ec
    from quillfw.crypto.secp256k1_gtable import BLOCKS, COLS, GTABLE, TEETH
    assert (BLOCKS, TEETH, COLS, len(GTABLE)) == (2, 8, 16, 256 * 64)
    for block in range(BLOCKS):
        for q in (0, 1, 2, 64, 126, 127):
            # digit j is +1 where bit j of q is set, -1 where clear; the top one is +1
            k = 1 << (block * 128 + 7 * COLS)
            for j in range(TEETH - 1):
                k += (1 if q >> j & 1 else -1) * (1 << (block * 128 + j * COLS))
            x, y = ec.point_mul(ec.G, k % ec.N)
            at = (block * 128 + q) * 64
            assert GTABLE[at:at + 64] == x.to_bytes(32, "big") + y.to_bytes(32, "big")
