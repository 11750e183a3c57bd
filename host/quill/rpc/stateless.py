"""RPC worker processes that serve HTTP beside the main process (-rpcworkers=N, issue 28 item 4).

quilld's event loop runs on one core; Core spreads its work over its RPC threads. With workers, the
main process starts N processes (quill.daemon.stateless_worker) once its RPC sockets are bound and
hands them those listening sockets (inherited file descriptors, so every -rpcbind address and port
0 alike): each worker accepts connections and runs the same RPCServer/HTTPConnection (access rules,
credentials, limits, replies), with a Dispatcher of the stateless methods only (registry.Method
.stateless: decoderawtransaction, decodescript, decodepsbt, ...), which need nothing of the node but
its chain name and -deprecatedrpc. The main process accepts only while none of its workers serves
(at start, or all of them gone): it answers the workers' relays. The kernel wakes every worker
for a new connection and would leave most of them to the one that runs first (7 of 8 in a
measurement), so the workers share their connection counts (ConnectionCounts, a memfd each maps)
and only one with no more than any other accepts.

A worker answers a parse error and a request whose calls are all stateless itself. Anything else
(another method, an unknown one, a batch with one such call, a body of LARGE_BODY_LIMIT or more) is
relayed over the worker's socketpair to the main process, which runs it as it runs its own
requests (RPCServer.run, in the connection's wallet and user) and sends back its status and bytes:
the answers are the main process's, byte for byte. Wrong credentials are relayed as REFUSED: the
main process's failure gate delays the 401, so guesses stay serialised across all processes.

Frames, both ways: job id (u32), kind (u8), payload length (u32), payload.
    worker -> main: READY (serving), RELAY (pickle of (wallet name or None, user, body)), REFUSED
    main -> worker: ANSWER (status u16 + reply bytes), NO_CONTENT (status u16), STOP

Stopping: the main process closes its listening sockets, sends STOP, answers relays while the
workers finish their requests in flight, waits STOP_WAIT seconds, then kills and reaps them. A
worker that dies takes its connections with it (their clients see them drop) and is replaced after
RESTART_DELAY. A worker whose main process has gone (its socket closes) stops.

Known limit: getrpcinfo's active_commands lists the calls of the main process only.
"""
from __future__ import annotations

import asyncio
import logging
import mmap
import os
import pickle
import socket
import struct
import subprocess
import sys
import time
from typing import Any, Callable

log = logging.getLogger("quill.rpc")

FRAME = struct.Struct("<IBI")
STATUS = struct.Struct("<H")
READY, RELAY, REFUSED, ANSWER, NO_CONTENT, STOP = range(6)
RESTART_DELAY = 1.0  # seconds before a worker that died is replaced
STOP_WAIT = 10.0  # seconds the workers have to finish their requests at shutdown
# A worker's threads for the bodies above the loop's inline limit, not -rpcthreads: its calls never
# wait on anything, so under one interpreter lock a second thread only adds switching. With 16, a
# 500-input decode at 64 clients took ~15 % more CPU and ~20 % fewer requests were answered.
WORKER_THREADS = 1


class _Frames(asyncio.Protocol):
    """One end of a worker's socketpair: frames in, `frame` called for each."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        at = 0
        size = len(buffer)
        while size - at >= FRAME.size:
            job, kind, length = FRAME.unpack_from(buffer, at)
            end = at + FRAME.size + length
            if end > size:
                break
            self.frame(job, kind, bytes(buffer[at + FRAME.size:end]))
            at = end
        if at:
            del buffer[:at]

    def frame(self, job: int, kind: int, payload: bytes) -> None:
        raise NotImplementedError

    def send(self, job: int, kind: int, payload: bytes = b"") -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.writelines((FRAME.pack(job, kind, len(payload)), payload))


# -- the main process's side -------------------------------------------------------------------


class _MainEnd(_Frames):
    """The main process's end of one worker's socket: runs what the worker relays."""

    def __init__(self, pool: WorkerProcesses, proc: subprocess.Popen[bytes], index: int) -> None:
        super().__init__()
        self.pool = pool
        self.proc = proc
        self.index = index  # its slot of the connection counts
        self.ready = False
        self.contexts: dict[tuple[str | None, str], Any] = {}

    def frame(self, job: int, kind: int, payload: bytes) -> None:
        if kind == READY:
            self.ready = True
        elif kind == RELAY:
            wallet, user, body = pickle.loads(payload)
            self._run(job, body, self._context(wallet, user))
        elif kind == REFUSED:
            asyncio.get_running_loop().create_task(self._refuse(job))

    def _context(self, wallet: str | None, user: str) -> Any:
        ctx = self.contexts.get((wallet, user))
        if ctx is None:
            from quill.rpc.jsonrpc import CallContext
            ctx = self.contexts[(wallet, user)] = CallContext(node=self.pool.server.node, wallet_name=wallet,
                                                              user=user)
        return ctx

    def _run(self, job: int, body: bytes, ctx: Any) -> None:
        try:
            outcome = self.pool.server.run(body, ctx)
        except Exception as e:  # as HTTPConnection._run: the worker's client is answered whatever happens
            log.error("unexpected %s serving a relayed request", type(e).__name__)
            outcome = 500, b""
        if isinstance(outcome, tuple):
            self._answer(job, outcome)
        else:
            asyncio.get_running_loop().create_task(self._await(job, outcome))

    async def _await(self, job: int, awaitable: Any) -> None:
        try:
            outcome = await awaitable
        except Exception as e:
            log.error("unexpected %s serving a relayed request", type(e).__name__)
            outcome = 500, b""
        self._answer(job, outcome)

    def _answer(self, job: int, outcome: tuple[Any, ...]) -> None:
        status, body = outcome[0], outcome[1]
        if body is None:
            self.send(job, NO_CONTENT, STATUS.pack(status))
        else:
            self.send(job, ANSWER, STATUS.pack(status) + bytes(body))

    async def _refuse(self, job: int) -> None:
        gate = self.pool.server.failures
        if gate is not None:
            await gate.wait()
        self.send(job, ANSWER, STATUS.pack(401))

    def connection_lost(self, exc: Exception | None) -> None:
        self.ready = False
        self.pool.lost(self)


class ConnectionCounts:
    """The open connections of each worker process, in memory they share (a memfd each inherits):
    a worker accepts only while it has no more than any other (RPCServer._accept_one). A slot
    holds GONE until its worker serves, and again once it has gone."""

    GONE = 0x7FFFFFFF

    def __init__(self, fd: int, size: int, index: int | None = None) -> None:
        self.fd = fd
        self.memory = mmap.mmap(fd, 4 * size)
        self.slots = memoryview(self.memory).cast("i")
        self.index = index

    @classmethod
    def create(cls, size: int) -> ConnectionCounts:
        fd = os.memfd_create("quill-rpc-workers")
        os.ftruncate(fd, 4 * size)
        counts = cls(fd, size)
        for i in range(size):
            counts.slots[i] = cls.GONE
        return counts

    def least(self) -> bool:
        assert self.index is not None
        return self.slots[self.index] <= min(self.slots)

    def publish(self, count: int, index: int | None = None) -> None:
        at = self.index if index is None else index
        assert at is not None
        self.slots[at] = count


class WorkerProcesses:
    """`size` worker processes serving `server`'s listening sockets beside it."""

    def __init__(self, server: Any, size: int, settings: dict[str, Any]) -> None:
        self.server = server
        self.size = size
        self.settings = settings
        self.workers: list[_MainEnd] = []
        self.listening: list[socket.socket] = []  # the server's listening sockets, for the workers
        self.counts = ConnectionCounts.create(size)
        self.free = list(range(size))  # the counts' slots of no worker
        self.stopping = False

    def listening_fds(self) -> list[int]:
        return [sock.fileno() for sock in self.listening]

    async def start(self) -> None:
        while len(self.workers) < self.size and not self.stopping:
            if not await self._spawn():
                return

    async def _spawn(self) -> bool:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        fds = self.listening_fds()
        index = self.free.pop(0)
        settings = dict(self.settings, listen=fds, link=theirs.fileno(), counts=(self.counts.fd, self.size, index))
        try:
            proc = subprocess.Popen([sys.executable, "-m", "quill.daemon.stateless_worker"],
                                    pass_fds=(*fds, theirs.fileno(), self.counts.fd), stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL)
        except OSError as e:
            log.warning("RPC worker not started: %s", e.strerror)
            self.free.append(index)
            ours.close()
            return False
        finally:
            theirs.close()
        assert proc.stdin is not None
        with proc.stdin:
            proc.stdin.write(pickle.dumps(settings))
        ours.setblocking(False)
        end = _MainEnd(self, proc, index)
        self.workers.append(end)
        await loop.create_unix_connection(lambda: end, sock=ours)
        return True

    @property
    def ready(self) -> int:
        return sum(1 for w in self.workers if w.ready)

    def lost(self, end: _MainEnd) -> None:
        if self.stopping or end not in self.workers:
            return  # stopping: `stop` reaps it
        self.workers.remove(end)
        self.counts.publish(ConnectionCounts.GONE, end.index)  # its connections went with it
        self.free.append(end.index)
        log.warning("RPC worker %d exited; a new one starts", end.proc.pid)
        loop = asyncio.get_running_loop()
        loop.run_in_executor(None, end.proc.wait)  # reaped
        loop.call_later(RESTART_DELAY, self._replace)

    def _replace(self) -> None:
        if not self.stopping:
            asyncio.get_running_loop().create_task(self.start())

    async def stop(self) -> None:
        """After the listening sockets closed: the workers finish their requests (relays are
        answered meanwhile), then are gone, killed after STOP_WAIT."""
        self.stopping = True
        workers, self.workers = self.workers, []
        for end in workers:
            end.send(0, STOP)
        for sock in self.listening:
            sock.close()
        os.close(self.counts.fd)
        await asyncio.get_running_loop().run_in_executor(None, _reap, [w.proc for w in workers])
        for end in workers:
            if end.transport is not None:
                end.transport.close()


def _reap(procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + STOP_WAIT
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- a worker's side -------------------------------------------------------------------------


class Relay(_Frames):
    """A worker's end of its socket: what it cannot answer goes to the main process."""

    def __init__(self, on_stop: Callable[[], None]) -> None:
        super().__init__()
        self.on_stop = on_stop
        self.jobs = 0
        self.pending: dict[int, asyncio.Future[tuple[int, bytes | None]]] = {}

    def frame(self, job: int, kind: int, payload: bytes) -> None:
        if kind == STOP:
            self.on_stop()
            return
        future = self.pending.pop(job, None)
        if future is None or future.done():
            return
        status = STATUS.unpack_from(payload)[0]
        future.set_result((status, None if kind == NO_CONTENT else payload[STATUS.size:]))

    def connection_lost(self, exc: Exception | None) -> None:
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_result((500, b""))
        self.on_stop()  # the main process has gone

    def _submit(self, kind: int, payload: bytes) -> asyncio.Future[tuple[int, bytes | None]]:
        self.jobs = (self.jobs + 1) & 0xFFFFFFFF
        future: asyncio.Future[tuple[int, bytes | None]] = asyncio.get_running_loop().create_future()
        if self.transport is None or self.transport.is_closing():
            future.set_result((500, b""))
            return future
        self.pending[self.jobs] = future
        self.send(self.jobs, kind, payload)
        return future

    def call(self, body: bytes | bytearray, ctx: Any) -> asyncio.Future[tuple[int, bytes | None]]:
        """The main process's (status, reply) for `body`, run in `ctx`'s wallet and user."""
        return self._submit(RELAY, pickle.dumps((ctx.wallet_name, ctx.user, bytes(body))))

    async def refused(self) -> None:
        """Wrong credentials: back when the main process's failure gate lets the 401 go."""
        await self._submit(REFUSED, b"")

    def ready(self) -> None:
        self.send(0, READY)
