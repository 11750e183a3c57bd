"""DevicePool: several signing devices (-device given several times) behind the one handle
the handlers know (`ctx.node.device`), each with its own DeviceQueue and thread.

    pool = DevicePool([DeviceManager(...), DeviceManager(...)], depth=64)
    pool.queue.submit(label, fn, *args)                  # the least busy able device
    pool.queue.submit(label, fn, *args, fingerprint=fp)  # a device holding that master key
    pool.client(), pool.info(), ...   # on a device's thread: that device; elsewhere: the first

Routing: a call goes to the able device with the shortest queue (the call at the device
counts), ties to the device given first. A device is able unless it was lost (restarted,
vanished, unreachable) less than DOWN_SECONDS ago; when every candidate was lost, they are
tried all the same, so a device that comes back is found again.

Retry: code that runs a request on a device and sees that device go (the signing pipeline,
quilld's own external signer) says so with `note_lost(exc)` before raising. When the call
was submitted as repeatable (one RPC, not a batch, or one of the signer's read-or-sign
commands), it is then made once more, whole, on another able device (for a
fingerprint-bound call, another device known to hold that fingerprint); the first attempt's
answer (an error) is dropped. Otherwise, or when there is no such device, the error is the
answer. Signing is deterministic, so a repeated signing answers the very bytes the first
device would have; nothing half-signed is ever returned (the signing code returns nothing
from a session that failed).

A single -device is a pool of one: the same queue, thread, snapshot and errors as before.
"""
from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from quill.device import hwkeys
from quill.device.client import DeviceClient
from quill.device.errors import DeviceError, DeviceUnavailable
from quill.device.manager import DeviceManager
from quill.device.queue import DeviceQueue, DeviceQueueFull

log = logging.getLogger("quill.device")

# A lost device gets no new calls for this long while another can take them.
DOWN_SECONDS = 5.0
# How long routing waits for a device to tell its fingerprint (it may be signing).
FINGERPRINT_TIMEOUT = 60.0


class NoDeviceHolds(DeviceUnavailable):
    """No device of the pool holds the master key a call is bound to."""

    def __init__(self, fingerprint: str) -> None:
        super().__init__(f"No device with fingerprint {fingerprint}")


class Member:
    """One device of the pool: its manager, its queue and what routing knows of it."""

    def __init__(self, index: int, manager: DeviceManager, depth: int) -> None:
        self.index = index              # 1, 2, ... in the order -device was given
        self.manager = manager
        self.queue = DeviceQueue(depth)
        self.down_since: float | None = None
        self.fingerprint: tuple[Any, str | None] | None = None   # (boot_id, fingerprint or None)

    def able(self, now: float) -> bool:
        return self.down_since is None or now - self.down_since >= DOWN_SECONDS

    def known_fingerprint(self) -> str | None | bool:
        """The fingerprint learnt for the device's current boot; False when not known."""
        boot_id = self.manager.cached_boot_id()
        if boot_id is None or self.fingerprint is None or self.fingerprint[0] != boot_id:
            return False
        return self.fingerprint[1]


@dataclass
class _Call:
    label: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    fingerprint: str | None
    repeatable: bool
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    tried: list[Member] = field(default_factory=list)


class _Attempt:
    __slots__ = ("member", "lost")

    def __init__(self, member: Member) -> None:
        self.member = member
        self.lost: BaseException | None = None


class DevicePool:
    def __init__(self, managers: list[DeviceManager], depth: int) -> None:
        if not managers:
            managers = [DeviceManager("")]      # no device: every call fails as NO_DEVICE says
        self.members = [Member(i + 1, m, depth) for i, m in enumerate(managers)]
        self.queue = PoolQueue(self, depth)
        self._local = threading.local()

    # ---- the device a handler sees: the one its call runs on ------------------------

    def current(self) -> Member:
        attempt = getattr(self._local, "attempt", None)
        return attempt.member if attempt is not None else self.members[0]

    @property
    def configured(self) -> bool:
        return self.members[0].manager.configured

    @property
    def spec(self) -> str:
        return self.current().manager.spec

    def client(self) -> DeviceClient:
        return self.current().manager.client()

    def info(self, refresh: bool = False) -> dict[str, Any]:
        return self.current().manager.info(refresh)

    def forget_info(self) -> None:
        self.current().manager.forget_info()

    def note_lost(self, exc: BaseException) -> None:
        """The device this call runs on was lost (restarted, vanished, unreachable) while
        the call used it: routing avoids it for a while, and the call may be made again
        elsewhere (see the module's docstring)."""
        attempt = getattr(self._local, "attempt", None)
        member = attempt.member if attempt is not None else self.members[0]
        member.down_since = time.monotonic()
        if attempt is not None:
            attempt.lost = exc

    def close(self) -> None:
        """Finish what is queued on every device, then close them (emulators stopped)."""
        self.queue.close()
        for member in self.members:
            member.manager.close()

    # ---- routing -----------------------------------------------------------------------

    def choose(self, fingerprint: str | None = None, exclude: tuple[Member, ...] = (),
               learn: bool = True) -> Member | None:
        """The least busy able device (holding `fingerprint` when given), ties by order;
        None when no device qualifies. learn: ask devices whose fingerprint is not known
        yet (waits on their queues; never from a device's own thread)."""
        candidates = [m for m in self.members if m not in exclude]
        if fingerprint is not None:
            wanted = fingerprint.lower()
            candidates = [m for m in candidates if self._holds(m, wanted, learn)]
        if not candidates:
            return None
        now = time.monotonic()
        able = [m for m in candidates if m.able(now)] or candidates
        return min(able, key=lambda m: (m.queue.load(), m.index))

    def _holds(self, member: Member, fingerprint: str, learn: bool) -> bool:
        known = member.known_fingerprint()
        if known is False and learn:
            try:
                known = member.queue.submit("fingerprint", self._learn_fingerprint, member).result(
                    FINGERPRINT_TIMEOUT)
            except (DeviceError, DeviceUnavailable, DeviceQueueFull, hwkeys.KeysUnavailable,
                    concurrent.futures.TimeoutError):
                return False
        return known == fingerprint

    def holder(self, fingerprint: str) -> Member | None:
        """From a device's thread: the device this call runs on when it holds `fingerprint`,
        else the first that does (asked directly, its session lock keeping its own calls
        apart), else None."""
        wanted = fingerprint.lower()
        for member in sorted(self.members, key=lambda m: m is not self.current()):
            known = member.known_fingerprint()
            if known is False:
                try:
                    known = self._learn_fingerprint(member)
                except (DeviceError, DeviceUnavailable, hwkeys.KeysUnavailable):
                    continue
            if known == wanted:
                return member
        return None

    @staticmethod
    def _learn_fingerprint(member: Member) -> str | None:
        """On the member's thread: its master key's fingerprint (None: no seed, locked)."""
        info = member.manager.info()
        state = hwkeys.key_state(info)
        fingerprint = state.fingerprint
        if state.state == "unlocked" and fingerprint is None:
            fingerprint = hwkeys.master_fingerprint(member.manager.client())
        if state.state != "unlocked":
            fingerprint = None
        member.fingerprint = (info.get("boot_id"), fingerprint)
        return fingerprint

    # ---- running a call on a device ----------------------------------------------------

    def run(self, call: _Call, member: Member) -> None:
        call.tried.append(member)
        member.queue.submit(call.label, self._attempt, call, member)
        log.debug("%s: queued on device %d", call.label, member.index)

    def _attempt(self, call: _Call, member: Member) -> None:
        """On the member's thread: the call, then its answer, or its one retry elsewhere."""
        if len(call.tried) == 1 and not call.future.set_running_or_notify_cancel():
            return      # cancelled while it waited
        attempt = self._local.attempt = _Attempt(member)
        try:
            result, error = call.fn(*call.args), None
        except BaseException as e:  # handed to the caller, never lost
            result, error = None, e
        finally:
            self._local.attempt = None
        if attempt.lost is None:
            member.down_since = None
        elif call.repeatable and len(call.tried) == 1 and self._retry(call, member, attempt.lost):
            return
        if error is not None:
            call.future.set_exception(error)
        else:
            call.future.set_result(result)

    def _retry(self, call: _Call, lost_on: Member, why: BaseException) -> bool:
        other = self.choose(call.fingerprint, exclude=tuple(call.tried), learn=False)
        if other is None:
            return False
        log.warning("Device %d lost during %s (%s): made again on device %d",
                    lost_on.index, call.label, why, other.index)
        try:
            self.run(call, other)
        except DeviceQueueFull:
            return False
        return True


class PoolQueue:
    """The pool as the RPC server and the node see a device queue (DeviceQueue's interface)."""

    def __init__(self, pool: DevicePool, depth: int) -> None:
        self.pool = pool
        self.depth = depth
        self._closed = False

    def submit(self, label: str, fn: Callable[..., Any], *args: Any,
               fingerprint: str | None = None, repeatable: bool = True) -> concurrent.futures.Future[Any]:
        """Queue fn(*args) on the chosen device; DeviceQueueFull when its queue is full,
        NoDeviceHolds when no device holds `fingerprint`."""
        member = self.pool.choose(fingerprint)
        if member is None:
            raise NoDeviceHolds(fingerprint or "")
        call = _Call(label, fn, args, fingerprint, repeatable)
        self.pool.run(call, member)
        return call.future

    def submit_once(self, label: str, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        """A call that must not be made twice (a batch: its other calls may not be repeatable)."""
        return self.submit(label, fn, *args, repeatable=False)

    def snapshot(self) -> list[dict[str, Any]]:
        """Every device's calls, device by device (DeviceQueue.snapshot's entries)."""
        return [entry for member in self.pool.members for entry in member.queue.snapshot()]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for member in self.pool.members:
            member.queue.close()
