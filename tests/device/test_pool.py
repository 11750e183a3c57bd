"""DevicePool's routing and retry rules, with stand-in devices (the real emulators:
tests/signing/test_device_pool.py): the least busy device, ties by order; a call made once more
on another device when its own was lost, once; a batch never; a lost device avoided for a while;
fingerprint-bound calls only on devices holding the key."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from quill.device import pool as pool_module
from quill.device.errors import DeviceDisconnected
from quill.device.pool import DevicePool, NoDeviceHolds


class StandIn:
    """What the pool asks of a DeviceManager; its key's fingerprint in get_info, as the firmware's."""

    def __init__(self, name: str, fingerprint: bytes | None = None) -> None:
        self.spec = name
        self.configured = True
        self.fingerprint = fingerprint
        self.closed = False

    def info(self, refresh: bool = False) -> dict[str, Any]:
        keys: dict[str, Any] = {"state": "uninitialized"}
        if self.fingerprint:
            keys = {"state": "unlocked", "fingerprint": self.fingerprint}
        return {"boot_id": "b-" + self.spec, "keys": keys}

    def cached_boot_id(self) -> str:
        return "b-" + self.spec

    def close(self) -> None:
        self.closed = True


@pytest.fixture()
def two() -> Iterator[DevicePool]:
    pool = DevicePool([StandIn("one", b"\x11" * 4), StandIn("two", b"\x22" * 4)], depth=8)  # type: ignore[list-item]
    yield pool
    pool.close()
    assert all(m.manager.closed for m in pool.members)


def where(pool: DevicePool) -> str:
    return pool.spec          # the device the call runs on, as a handler sees it


def losing(pool: DevicePool, lost: str, seen: list[str]) -> Any:
    """A call that records the device it ran on, and loses the device `lost` (answering an error)."""
    def call() -> str:
        seen.append(pool.spec)
        if pool.spec == lost:
            pool.note_lost(DeviceDisconnected("gone"))
            return "error answer"
        return "signed"
    return call


def test_an_idle_pool_uses_the_first_device_then_the_least_busy(two: DevicePool) -> None:
    assert two.queue.submit("x", where, two).result(5) == "one"
    gate = threading.Event()
    blocked = two.queue.submit("hold", gate.wait, 5)          # device one is busy
    try:
        assert two.queue.submit("x", where, two).result(5) == "two"
        # a second call at device one: one has 1 call, two none: two again
        assert two.queue.submit("x", where, two).result(5) == "two"
    finally:
        gate.set()
    assert blocked.result(5) is True
    assert two.queue.snapshot() == []


def test_a_lost_device_s_call_is_made_once_more_on_the_other(two: DevicePool) -> None:
    seen: list[str] = []
    assert two.queue.submit("sign", losing(two, "one", seen)).result(5) == "signed"
    assert seen == ["one", "two"]
    # device one is avoided for a while, then tried again
    assert two.queue.submit("x", where, two).result(5) == "two"
    two.members[0].down_since = time.monotonic() - pool_module.DOWN_SECONDS
    assert two.queue.submit("x", where, two).result(5) == "one"


def test_a_call_is_made_twice_at_most_and_a_batch_once(two: DevicePool) -> None:
    seen: list[str] = []

    def always_lost() -> str:
        seen.append(two.spec)
        two.note_lost(DeviceDisconnected("gone"))
        return "error answer from " + two.spec

    assert two.queue.submit("sign", always_lost).result(5) == "error answer from two"
    assert seen == ["one", "two"]
    seen.clear()
    for member in two.members:
        member.down_since = None
    assert two.queue.submit_once("batch", always_lost).result(5) == "error answer from one"
    assert seen == ["one"]


def test_an_exception_is_the_answer_when_nothing_is_lost(two: DevicePool) -> None:
    def fails() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        two.queue.submit("x", fails).result(5)


def test_fingerprint_bound_calls_go_to_a_device_holding_it(two: DevicePool) -> None:
    assert two.queue.submit("x", where, two, fingerprint="22222222").result(5) == "two"
    assert two.queue.submit("x", where, two, fingerprint="11111111").result(5) == "one"
    with pytest.raises(NoDeviceHolds, match="No device with fingerprint 33333333"):
        two.queue.submit("x", where, two, fingerprint="33333333")

    def lost() -> str:
        two.note_lost(DeviceDisconnected("gone"))
        return "error answer"

    # no other device holds the key: the lost device's answer stands
    assert two.queue.submit("sign", lost, fingerprint="22222222").result(5) == "error answer"


def test_one_device_is_a_pool_of_one() -> None:
    pool = DevicePool([StandIn("only")], depth=1)  # type: ignore[list-item]
    try:
        gate, started = threading.Event(), threading.Event()
        held = pool.queue.submit("hold", lambda: started.set() or gate.wait(5))
        assert started.wait(5)                           # at the device: no longer waiting
        waiting = pool.queue.submit("next", where, pool)
        with pytest.raises(pool_module.DeviceQueueFull):
            pool.queue.submit("more", where, pool)
        assert [(q["method"], q["position"]) for q in pool.queue.snapshot()] == [("hold", 0), ("next", 1)]
        gate.set()
        assert held.result(5) is True and waiting.result(5) == "only"
    finally:
        pool.close()


def test_no_device_given_is_unconfigured() -> None:
    pool = DevicePool([], depth=4)
    try:
        assert pool.configured is False
    finally:
        pool.close()


def test_a_fingerprint_bound_call_is_made_again_on_another_device_with_that_key() -> None:
    same = b"\x73\xc5\xda\x0a"
    pool = DevicePool([StandIn("a", b"\x11" * 4), StandIn("b", same), StandIn("c", same)], depth=4)  # type: ignore[list-item]
    seen: list[str] = []
    try:
        assert pool.queue.submit("signer signtx", losing(pool, "b", seen), fingerprint="73C5DA0A").result(5) \
            == "signed"
        assert seen == ["b", "c"]
    finally:
        pool.close()
