"""Stateless calls answered beside the event loop, by worker processes (issue 28 item 4).

quilld's loop runs on one core; Core spreads its work over its RPC threads. A call whose method is
stateless (registry.Method.stateless: decoderawtransaction, decodescript, decodepsbt, ...) needs
nothing of the node but its chain name and -deprecatedrpc, so another process can answer it: the
loop keeps the HTTP side (access rules, credentials, limits, the work queue's 503, replies) and hands
the request body to a worker, which parses and runs it with the same registry entries and the same
Dispatcher and sends back the (status, reply bytes) the loop would have made, byte for byte.

A worker is one interpreter (`argv`, the daemon's stateless worker) on one end of a socketpair,
answering requests in the order they come. Frames, both ways, little-endian:
    request: job id (u32), body length (u32), body
    reply:   job id (u32), status (u16), kind (u8), length (u32), body
kind: ANSWER (body is the reply), NO_CONTENT (no body: a notification), NOT_MINE (a call in it is
not stateless: the loop runs the request itself, as it would have without workers).

The workers start at the first stateless call, not at start-up (the first answer does not wait for
them), and a call is answered in-process as before until one has said it is ready. A worker that
dies takes nothing with it: its calls are answered in-process (a stateless call may run twice), and
a new worker is started at a later call.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import socket
import struct
import subprocess
import time

log = logging.getLogger("quill.rpc")

REQUEST = struct.Struct("<II")
REPLY = struct.Struct("<IHBI")
ANSWER, NO_CONTENT, NOT_MINE, READY = 0, 1, 2, 3
RESTART_DELAY = 5.0  # seconds before a worker that died is replaced


class WorkerLost(Exception):
    """The worker went before it answered: the caller answers the request itself."""


class _Worker(asyncio.Protocol):
    """The loop's end of one worker's socket."""

    def __init__(self, pool: StatelessPool, proc: subprocess.Popen[bytes]) -> None:
        self.pool = pool
        self.proc = proc
        self.transport: asyncio.Transport | None = None
        self.ready = False
        self.buffer = bytearray()
        self.pending: dict[int, asyncio.Future[tuple[int, int, bytes]]] = {}

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        at = 0
        size = len(buffer)
        while size - at >= REPLY.size:
            job, status, kind, length = REPLY.unpack_from(buffer, at)
            end = at + REPLY.size + length
            if end > size:
                break
            if kind == READY:
                self.ready = True
            else:
                future = self.pending.pop(job, None)
                if future is not None and not future.cancelled():
                    future.set_result((status, kind, bytes(buffer[at + REPLY.size:end])))
            at = end
        if at:
            del buffer[:at]

    def connection_lost(self, exc: Exception | None) -> None:
        self.ready = False
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(WorkerLost())
        self.pool.lost(self)

    def submit(self, job: int, body: bytes | bytearray) -> asyncio.Future[tuple[int, int, bytes]]:
        assert self.transport is not None
        future: asyncio.Future[tuple[int, int, bytes]] = asyncio.get_running_loop().create_future()
        self.pending[job] = future
        self.transport.writelines((REQUEST.pack(job, len(body)), body))  # one send: head and body together
        return future


class StatelessPool:
    """`size` worker processes, each started as `argv` + [the fd of its socket]."""

    def __init__(self, argv: list[str], size: int) -> None:
        self.argv = argv
        self.size = size
        self.workers: list[_Worker] = []
        self.gone: list[_Worker] = []  # workers lost while running, until their process is reaped
        self.jobs = 0
        self.closed = False
        self.starting = False
        self.next_start = 0.0

    def submit(self, body: bytes | bytearray, spill: bool) -> asyncio.Future[tuple[int, int, bytes]] | None:
        """A future of (status, kind, bytes) from the least busy ready worker, or None: no worker is
        ready yet (they are started now if need be), or `spill` and every worker has a call already
        (the caller answers it in-process, beside them)."""
        if len(self.workers) < self.size and not self.closed:
            self._start_missing()
        best: _Worker | None = None
        for worker in self.workers:
            if worker.ready and (best is None or len(worker.pending) < len(best.pending)):
                best = worker
        if best is None or (spill and best.pending):
            return None
        self.jobs = (self.jobs + 1) & 0xFFFFFFFF
        return best.submit(self.jobs, body)

    def _start_missing(self) -> None:
        if self.starting or time.monotonic() < self.next_start:
            return
        self.starting = True
        asyncio.get_running_loop().create_task(self._start())

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while len(self.workers) < self.size and not self.closed:
                ours, theirs = socket.socketpair()
                try:
                    proc = subprocess.Popen([*self.argv, str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                except OSError as e:
                    log.warning("Stateless RPC worker not started: %s", e.strerror)
                    ours.close()
                    self.next_start = time.monotonic() + RESTART_DELAY
                    return
                finally:
                    theirs.close()
                ours.setblocking(False)
                worker = _Worker(self, proc)
                await loop.create_unix_connection(functools.partial(_same, worker), sock=ours)
                self.workers.append(worker)
        finally:
            self.starting = False

    def lost(self, worker: _Worker) -> None:
        if self.closed or worker not in self.workers:
            return  # closing: `wait` reaps it
        self.workers.remove(worker)
        self.gone.append(worker)
        log.warning("Stateless RPC worker %d exited; its calls are answered in-process", worker.proc.pid)
        self.next_start = time.monotonic() + RESTART_DELAY
        self.gone = [w for w in self.gone if w.proc.poll() is None]  # the exited ones reaped

    def close(self) -> None:
        """On the loop: no more calls; each worker ends when its socket closes (then `wait`)."""
        self.closed = True
        for worker in self.workers:
            if worker.transport is not None:
                worker.transport.close()

    def wait(self) -> None:
        """Blocking, off the loop, after `close`: the workers have exited (killed after 5 s)."""
        workers, self.workers = self.workers + self.gone, []
        self.gone = []
        for worker in workers:
            try:
                worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                worker.proc.wait()


def _same(worker: _Worker) -> _Worker:
    return worker


def answer(outcome: tuple[int, int, bytes]) -> tuple[int, bytes | None] | None:
    """A worker's reply as the server's (status, body), or None for NOT_MINE."""
    status, kind, body = outcome
    if kind == NOT_MINE:
        return None
    return status, (None if kind == NO_CONTENT else body)


def worker_log_level_ok() -> bool:
    """Workers are not used while quill.rpc logs its debug lines (each call's method and user
    are logged where the call is received)."""
    return not log.isEnabledFor(logging.DEBUG)

