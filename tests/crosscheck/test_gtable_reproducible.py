"""The committed comb table is exactly what tools/gen_gtable.py generates."""
from pathlib import Path

from tools import gen_gtable as gen

ROOT = Path(__file__).resolve().parents[2]


def test_committed_table_matches_generator():
    committed = (ROOT / "firmware" / "quillfw" / "crypto" / "secp256k1_gtable.py").read_text()
    assert gen.render_module(gen.build_table(8), 8) == committed


def test_table_entries_are_the_comb_sums():
    from quillfw.crypto import secp256k1 as ec
    from quillfw.crypto.secp256k1_gtable import COLS, GTABLE, TEETH
    assert (TEETH, COLS, len(GTABLE)) == (8, 32, 255 * 64)
    for i in (1, 2, 3, 128, 129, 255):
        k = sum(1 << (COLS * j) for j in range(TEETH) if i >> j & 1)
        x, y = ec.point_mul(ec.G, k)
        assert GTABLE[(i - 1) * 64:i * 64] == x.to_bytes(32, "big") + y.to_bytes(32, "big")
