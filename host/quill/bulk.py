"""Python's cyclic garbage collector during bulk work.

Parsing blocks and building large RPC answers create millions of small acyclic objects
(transactions, dicts of a listing). Each allocation burst triggers collections that traverse
everything alive, the wallet's decoded transactions included: 35-65 % of the time of a
100k-transaction listsinceblock. Reference counting frees these objects anyway, so the
collector is paused for the bulk step.

Nothing is collected by hand after it: the allocations counted meanwhile make the
collector run at the next one, as it decides, older generations included. A
`gc.collect(0)` there (as before) reset that count at every step, so with steps
coming often (every wallet listing) the automatic collections, the only ones that
reach the older generations, stopped: every cycle that had lived through one
young pass (a closed connection, a failed signing call's traceback) was never
freed, and the daemon grew with its requests.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def bulk_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
