"""Where did quilld's memory grow? Reads what tools/memtrace/sitecustomize.py
wrote: the series, the live object types that grew, and (with snapshots) the
allocation sites that grew between two tracemalloc snapshots.

    python tools/memtrace/compare.py DIR [FIRST LAST] [--traceback]
"""
from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

MB = 2 ** 20


def main() -> None:
    folder = Path(sys.argv[1])
    by_traceback = "--traceback" in sys.argv
    nums = [int(a) for a in sys.argv[2:] if not a.startswith("--")]
    records = []
    for line in (folder / "series.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "trim" in rec:
            print(f"t={rec['t']:7.1f} malloc_trim: {rec['before'] / MB:.1f} -> {rec['after'] / MB:.1f} MB")
            continue
        records.append(rec)
        mi = rec["mallinfo"]
        print(f"t={rec['t']:7.1f} rss={rec['rss'] / MB:6.1f} MB objects={rec['objects']:7d} "
              f"blocks={rec['blocks']:7d} traced={rec.get('traced', [0])[0] / MB:6.2f} MB "
              f"malloc arena={mi['arena'] / MB:6.1f} used={mi['uordblks'] / MB:6.1f} "
              f"free={mi['fordblks'] / MB:6.1f} mmap={mi['hblkhd'] / MB:5.1f} threads={rec['threads']}"
              + (f" anon={rec['rss_anon'] / MB:6.1f} pymalloc arenas={pm['arenas allocated current']} "
                 f"in blocks={pm['bytes in allocated blocks'] / MB:6.1f} free blocks="
                 f"{pm['bytes in available blocks'] / MB:5.1f} MB" if (pm := rec.get("pymalloc")) else ""))
    if len(records) >= 2:
        a, b = dict(records[0]["top_types"]), dict(records[-1]["top_types"])
        grown = sorted(((b.get(k, 0) - a.get(k, 0), k) for k in set(a) | set(b)), reverse=True)
        print("live objects grown:", ", ".join(f"{k} {d:+d}" for d, k in grown[:10] if d))
        a, b = dict(records[0].get("weakref_targets", [])), dict(records[-1].get("weakref_targets", []))
        grown = sorted(((b.get(k, 0) - a.get(k, 0), k) for k in set(a) | set(b)), reverse=True)
        print("weakly referenced objects grown:", ", ".join(f"{k} {d:+d}" for d, k in grown[:10] if d))
    snaps = sorted(folder.glob("snap-*.pickle"))
    if len(snaps) < 2:
        return
    first, last = ((folder / f"snap-{nums[0]:03d}.pickle", folder / f"snap-{nums[1]:03d}.pickle") if nums
                   else (snaps[min(2, len(snaps) - 2)], snaps[-1]))
    old = tracemalloc.Snapshot.load(str(first))
    new = tracemalloc.Snapshot.load(str(last))
    print(f"\n{first.name} -> {last.name}")
    for stat in new.compare_to(old, "traceback" if by_traceback else "lineno")[:25]:
        print(stat)
        if by_traceback:
            for frame in stat.traceback.format()[-12:]:
                print("    " + frame)


if __name__ == "__main__":
    main()
