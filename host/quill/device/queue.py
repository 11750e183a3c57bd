"""DeviceQueue: calls that need the signing device wait here, in order, on the
device's own thread, never on an RPC worker.

The device does one thing at a time (a signing session holds it from sign_begin
to sign_end, possibly while its user decides), so a call that needs it can only
wait. Waiting on an RPC worker would let a few dozen signers occupy every worker
and stall unrelated calls; here they wait as entries in a bounded queue, and each
knows its place (`snapshot()`, shown by getrpcinfo and getdeviceinfo).

    queue = DeviceQueue(depth=64)
    future = queue.submit("signrawtransactionwithkey", fn, *args)   # or DeviceQueueFull
    queue.snapshot()   # [{"method", "position", "duration"}], position 0 = at the device now
"""
from __future__ import annotations

import concurrent.futures
import threading
import time
from collections import deque
from typing import Any, Callable

DEVICE_THREAD = "device-queue"


class DeviceQueueFull(Exception):
    """More calls are waiting for the device than the queue holds."""


class _Job:
    __slots__ = ("label", "fn", "args", "future", "queued_at")

    def __init__(self, label: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.label = label
        self.fn = fn
        self.args = args
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.queued_at = time.monotonic()


class DeviceQueue:
    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._cond = threading.Condition()
        self._waiting: deque[_Job] = deque()
        self._running: _Job | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=DEVICE_THREAD, daemon=True)
        self._thread.start()

    def submit(self, label: str, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        """Queue fn(*args); its future settles when the device has done it."""
        job = _Job(label, fn, args)
        with self._cond:
            if self._stopping:
                raise DeviceQueueFull("the device queue is closed")
            if len(self._waiting) >= self.depth:
                raise DeviceQueueFull(f"{len(self._waiting)} calls already wait for the device")
            self._waiting.append(job)
            self._cond.notify()
        return job.future

    # one device has nowhere else to make a call again: every call is made once
    submit_once = submit

    def load(self) -> int:
        """How many calls are at or waiting for the device."""
        with self._cond:
            return len(self._waiting) + (self._running is not None)

    def snapshot(self) -> list[dict[str, Any]]:
        """Every call at or waiting for the device, in order: position 0 is the one
        the device is doing now; duration in microseconds since it was queued."""
        now = time.monotonic()
        with self._cond:
            jobs = ([self._running] if self._running is not None else []) + list(self._waiting)
            first = 0 if self._running is not None else 1
        return [{"method": job.label, "position": first + i, "duration": int((now - job.queued_at) * 1_000_000)}
                for i, job in enumerate(jobs)]

    def close(self) -> None:
        """Finish what is queued, then stop the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._waiting and not self._stopping:
                    self._cond.wait()
                if not self._waiting:
                    return
                job = self._running = self._waiting.popleft()
            if job.future.set_running_or_notify_cancel():
                try:
                    job.future.set_result(job.fn(*job.args))
                except BaseException as e:  # handed to the caller, never lost
                    job.future.set_exception(e)
            with self._cond:
                self._running = None
            # nothing of the call (request, reply, traceback) outlives it on this thread
            job = None  # type: ignore[assignment]
