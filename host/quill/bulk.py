"""Python's cyclic garbage collector during bulk work.

Parsing blocks and building large RPC answers create millions of small acyclic objects
(transactions, dicts of a listing). Each allocation burst triggers collections that traverse
everything alive, the wallet's decoded transactions included: 35-65 % of the time of a
100k-transaction listsinceblock. Reference counting frees these objects anyway, so the
collector is paused for the bulk step and given one young-generation pass after it.
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
            gc.collect(0)
