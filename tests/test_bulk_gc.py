"""quill.bulk.bulk_gc pauses the cyclic collector for a bulk step; steps that come
often (every wallet listing the soak asks for) must not stop the collector from
reaching the older generations, where a cycle that lived through one young pass
(a closed connection, a failed call's traceback) waits to be freed."""
from __future__ import annotations

import gc
import weakref

from quill.bulk import bulk_gc


class Node(list):
    """A list that holds itself: a cycle only the collector frees."""


def garbage_in_an_older_generation() -> weakref.ref[Node]:
    node = Node()
    node.append(node)
    gc.collect(0)  # alive through a young collection: promoted
    return weakref.ref(node)


def test_frequent_bulk_steps_leave_older_cyclic_garbage_collectable() -> None:
    assert gc.isenabled()
    gc.collect()
    ref = garbage_in_an_older_generation()
    for _ in range(200):  # requests, each with a listing built under bulk_gc
        with bulk_gc():
            listing = [{} for _ in range(800)]
        del listing
    assert gc.isenabled()
    assert ref() is None, "cyclic garbage in an older generation outlived 200 bulk steps"
