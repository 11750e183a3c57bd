"""HTTP/1.1 server for JSON-RPC, with Core's access rules (core-rpc.md §5.1-5.2)
and Core's replies byte for byte (libevent's evhttp as Core 31 uses it).

One asyncio.Protocol per connection, parsed by httptools (llhttp). I/O runs on
one event loop, so a slow or half-sent request costs a few objects, never a
thread. Each request is decided as soon as its headers are in, in Core's
order: allowed peer (403), HTTP method (405), URI (404), work queue (503),
POST only (405 with a body), credentials (401), size (413). Any of these is
answered at once and the body, if one follows, is discarded as it arrives,
never buffered: an unauthenticated client cannot make the server hold memory.

A request that passes runs where its method says (registry lanes): cheap calls
inline on the loop (small bodies only), calls that may block on the -rpcthreads
worker pool (a queue bounded by -rpcworkqueue: 503 when full), and calls that
need the signing device on the device's own queue (quill.device.queue), so
waiting signers never hold a worker. A connection reads nothing more while its
request runs or its reply cannot be written (one request and one reply per
connection at most), and a request's body and reply are dropped as soon as the
reply is handed to the socket.

Fairness (issue 24). The requests in flight, from their headers to their reply,
hold at most MAX_BUFFERED_BYTES of bodies together (each at most MAX_BODY_SIZE).
A request whose body does not fit waits, unread, for its turn: its connection is
not read (the client's sends block in its own socket buffer, costing the server
nothing), and the waiting requests are admitted in arrival order as the bodies
before them are answered; one that waits longer than -rpcservertimeout gets
Core's 503 for a full work queue. A small body that fits never waits behind a
large one. A body of LARGE_BODY_LIMIT or more is
parsed, run and answered on its own one-thread lane, in bounded slices
(rpc/univalue_sliced): no C call holds the interpreter for long, so the loop and
the other clients go on meanwhile, and large requests cannot crowd out the pool.
That lane's thread runs at a lower CPU priority (LARGE_LANE_NICE): on a busy
machine the loop and the good clients' own processes get the cores first.
Once none is left, the heap's free memory is given back (daemon/memory).

Wrong credentials are answered after AUTH_FAILURE_DELAY, one failure at a time
for the whole server, so parallel guesses are serialised. The delay belongs to
its connection: while it runs the connection is still read, so a client that
closes is seen at once and its place in the line is given up; a departed
client costs nothing afterwards, and the next legitimate typo waits only for
the guessers still connected. The comparison itself is constant-time (rpc/auth.py).

With -rpcworkers=N (rpc/stateless) N worker processes run this same server on the listening
sockets, answer the stateless calls themselves and relay every other request to the main
process's `run` (`relay`); wrong credentials wait in the main process's failure line.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import select
import socket
import threading
import time
import urllib.parse
from collections import deque
from typing import Any, Callable

import httptools

from quill.daemon.memory import release_free_memory
from quill.device.pool import PoolQueue
from quill.device.queue import DeviceQueue, DeviceQueueFull
from quill.rpc.jsonrpc import CallContext, Dispatcher
from quill.rpc.registry import DEVICE, INLINE
from quill.rpc.stateless import WORKER_THREADS, ConnectionCounts, Relay, WorkerProcesses
from quill.rpc.univalue_sliced import Batch

log = logging.getLogger("quill.http")

MAX_HEADERS_SIZE = 8192
MAX_BODY_SIZE = 0x02000000  # 32 MiB, as Core
# Bodies of the requests in flight, all connections together: one large body being run on the
# large lane and the next one arriving, no more (more could only wait there, and their reading
# would take the interpreter from the event loop meanwhile).
MAX_BUFFERED_BYTES = 2 * MAX_BODY_SIZE
INLINE_BODY_LIMIT = 16384  # larger bodies are parsed and run on a worker, whatever the method
LARGE_BODY_LIMIT = 1 << 20  # from this size on, on the large lane, in bounded slices
LARGE_LANE_NICE = 10  # the large lane's thread runs this much nicer than the rest of quilld
TRIM_DELAYS = (0.25, 2.0)  # seconds after the last large request to give free memory back
ACCEPT_RETRY = 0.001  # seconds before a worker process that was not the least busy looks again
ACCEPT_PATIENCE = 0.05  # seconds after which it takes a connection that no other process took
MAIN_ACCEPT_PATIENCE = 1.0  # the same for the main process while it has a worker serving
LISTEN_BACKLOG = 1024  # connections waiting to be accepted: a burst of them is not dropped
AUTH_FAILURE_DELAY = 0.25
WRITE_HIGH_WATER = 1 << 20

_REASONS = {100: "Continue", 200: "OK", 204: "No Content", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
            413: "Payload Too Large", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
            503: "Service Unavailable"}
# The methods Core's HTTPRequest knows; any other is a 405 without a body.
_KNOWN_HTTP_METHODS = {b"GET", b"POST", b"HEAD", b"PUT"}
_DEFAULT_CONTENT_TYPE = b"Content-Type: text/html; charset=ISO-8859-1\r\n"
_JSON_CONTENT_TYPE = b"Content-Type: application/json\r\n"
_WWW_AUTHENTICATE = b'WWW-Authenticate: Basic realm="jsonrpc"\r\n'
_ONLY_POST = b"JSONRPC server handles only POST requests"
_QUEUE_FULL = b"Work queue depth exceeded"
_WAIT_FOR_BUDGET = object()  # decide(): the body does not fit beside those in flight yet


class HTTPError(Exception):
    def __init__(self, status: int, body: bytes = b"") -> None:
        self.status = status
        self.body = body


class WorkQueue:
    """Core's HTTP work queue: -rpcthreads workers take requests in order from
    a queue that holds at most -rpcworkqueue waiting requests (`depth`; the server
    answers 503 beyond it).

    A hand-rolled pool rather than ThreadPoolExecutor: a worker hands its
    result straight to the event loop, which roughly halves the per-request
    hand-off cost measured with concurrent.futures. Its threads start as calls
    need them, at most `threads`, and stay: none is started before the first
    answer (each start waits for the new thread to run, long on a busy machine).
    """

    _STOP = object()

    def __init__(self, threads: int, depth: int, name: str = "rpc-worker", nice: int = 0) -> None:
        self.depth = depth
        self.nice = nice
        self.name = name
        self.threads = threads
        self.idle = 0  # workers waiting for a job that no job has claimed yet
        self.idle_lock = threading.Lock()
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.workers: list[threading.Thread] = []
        self.stopped = False

    def run(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.jobs.put((loop, future, fn, args))
        with self.idle_lock:  # each job claims a waiting worker, else starts one (up to `threads`)
            claimed = self.idle > 0
            if claimed:
                self.idle -= 1
        if not claimed and len(self.workers) < self.threads and not self.stopped:
            worker = threading.Thread(target=self._work, name=f"{self.name}-{len(self.workers)}", daemon=True)
            self.workers.append(worker)
            worker.start()
        return future

    def _work(self) -> None:
        if self.nice:
            _lower_priority(self.nice)
        # a new worker's first job is the one that started it; after each job it is claimable (_one)
        while self._one(self.jobs.get()):
            pass

    def _one(self, job: Any) -> bool:
        """One job in its own frame: nothing of it (request, reply, traceback)
        stays referenced by an idle worker. False for the stop marker."""
        if job is self._STOP:
            return False
        loop, future, fn, args = job
        try:
            result, error = fn(*args), None
        except BaseException as e:  # handed to the awaiting coroutine, never lost
            result, error = None, e
        with self.idle_lock:  # free before its caller hears of it: the caller's next call claims it
            self.idle += 1
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:
            pass  # the loop is closed: nobody is waiting any more
        return True

    def shutdown(self) -> None:
        self.stopped = True
        workers = list(self.workers)
        for _ in workers:
            self.jobs.put(self._STOP)
        for worker in workers:
            worker.join()


def _lower_priority(nice: int) -> None:
    """This thread's CPU priority lowered by `nice` (Linux schedules threads one by one). A thread
    only ever lowers its own priority, which needs no privilege; elsewhere nothing changes."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0) + nice)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class _Exchange:
    """One request from its first byte to its reply."""

    __slots__ = ("method", "url", "minor", "headers", "header_bytes", "body", "length", "received", "complete",
                 "early", "keep_alive", "expect_continue", "repeatable", "refused", "reserved", "waiting")

    def __init__(self) -> None:
        self.method = b""
        self.url = b""
        self.minor = 1
        self.headers: dict[bytes, bytes] = {}
        self.header_bytes = 0
        self.body: bytes | bytearray | None = None  # None: answered from the headers, nothing to keep
        self.length = 0  # the announced Content-Length
        self.received = 0
        self.complete = False
        # (status, body, close) decided from the headers alone, or an awaitable of it
        self.early: Any = None
        self.keep_alive = True
        self.expect_continue = False
        self.repeatable = False  # passed, and its head may be decided again unparsed (_RepeatHead)
        self.refused = False  # wrong credentials: `early` is the wait of _FailureGate
        self.reserved = 0  # bytes of MAX_BUFFERED_BYTES held for it until its reply is written
        self.waiting = False  # its body does not fit in MAX_BUFFERED_BYTES yet: not read (RPCServer.admit)


class _FailureGate:
    """Wrong credentials answered one at a time for the whole server, in arrival order.

    A wait is cancelled when its connection closes (HTTPConnection.connection_lost):
    asyncio.Lock drops a cancelled waiter from its line and a cancelled holder frees it,
    so only connected guessers are ever waited for. `waiting` counts the waits now
    queued or running."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.line = asyncio.Lock()
        self.waiting = 0

    async def wait(self) -> None:
        self.waiting += 1
        try:
            async with self.line:
                await asyncio.sleep(self.delay)
        finally:
            self.waiting -= 1


class RPCServer:
    def __init__(self, *, dispatcher: Dispatcher, authenticator: Any, allowlist: Any, node: Any,
                 binds: list[tuple[str, int]], work_queue: int = 64, threads: int = 16, timeout: float = 30.0,
                 device_queue: DeviceQueue | PoolQueue | None = None,
                 auth_failure_delay: float = AUTH_FAILURE_DELAY, relay: Relay | None = None,
                 balance: ConnectionCounts | None = None) -> None:
        self.dispatcher = dispatcher
        self.authenticator = authenticator
        self.allowlist = allowlist
        self.node = node
        self.binds = binds
        self.queue = WorkQueue(threads, work_queue)
        # Large requests are bulk work: their thread yields the CPU to the event loop and to
        # other processes (the good clients) when the machine is busy.
        self.large = WorkQueue(1, work_queue, name="rpc-large", nice=LARGE_LANE_NICE)
        self.large_in_flight = 0
        self.device_queue = device_queue if device_queue is not None else DeviceQueue(work_queue)
        self.timeout = timeout
        self.auth_failure_delay = auth_failure_delay
        self.failures: _FailureGate | None = None
        self.servers: list[asyncio.AbstractServer] = []
        self.connections: set[HTTPConnection] = set()
        self.buffered = 0
        self.budget_waiters: deque[tuple[HTTPConnection, _Exchange]] = deque()
        self.in_flight = 0
        self.stopping = False
        self.idle: asyncio.Event | None = None
        # In a worker process (rpc/stateless): what this process does not answer goes to the main one
        self.relay = relay
        self.workers: WorkerProcesses | None = None  # in the main process: its -rpcworkers
        self.listening: list[socket.socket] = []  # sockets accepted from one connection at a time
        self.balance = balance  # in a worker process: the connections of each (rpc/stateless)
        self.connecting = 0  # connections accepted, not made yet
        self.deferred_since: float | None = None  # when _accept_one first left a connection to others
        self.bound_ports: list[int] = []

    # -- lifecycle -------------------------------------------------------

    async def start(self, sockets: list[Any] | None = None) -> None:
        """Bind `binds`, or serve `sockets` already listening (a worker process's, inherited)."""
        loop = asyncio.get_running_loop()
        self.idle = asyncio.Event()
        self.idle.set()
        self.failures = _FailureGate(self.auth_failure_delay)
        for sock in sockets or ():
            sock.setblocking(False)
            self.listening.append(sock)
            loop.add_reader(sock.fileno(), self._accept_one, sock)
        for host, port in self.binds:
            try:
                server = await loop.create_server(lambda: HTTPConnection(self), host, port, reuse_address=True,
                                                  backlog=LISTEN_BACKLOG)
            except OSError as e:
                log.warning("Binding RPC on address %s port %d failed: %s", host, port, e.strerror)
                continue
            log.info("Binding RPC on address %s port %d", host, port)
            self.servers.append(server)
        if not self.servers and not self.listening:
            raise OSError("Unable to bind any endpoint for RPC server")
        self.bound_ports = [s.sockets[0].getsockname()[1] for s in self.servers if s.sockets]  # type: ignore[attr-defined]

    def _accept_one(self, sock: socket.socket) -> None:
        """A socket shared with other processes (rpc/stateless) is readable: one connection taken,
        no more, and only by a worker process that has no more connections than any other (the
        kernel wakes them all, and would leave most connections to the one that runs first), or
        by the main process while none of its workers serves; the others look again after
        ACCEPT_RETRY, when the least busy has taken it, and take it themselves once it has waited
        ACCEPT_PATIENCE (MAIN_ACCEPT_PATIENCE in the main process): the least busy may be stuck."""
        balance = self.balance
        loop = asyncio.get_running_loop()
        if (balance is not None and not balance.least()) or (self.workers is not None and self.workers.ready):
            now = loop.time()
            if self.deferred_since is None:
                self.deferred_since = now
            if now - self.deferred_since < (ACCEPT_PATIENCE if balance is not None else MAIN_ACCEPT_PATIENCE):
                loop.remove_reader(sock.fileno())
                loop.call_later(ACCEPT_RETRY, self._watch, sock)
                return
        self.deferred_since = None
        try:
            conn, _ = sock.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return  # another process took it
        except OSError as e:
            log.warning("RPC accept failed: %s", e.strerror)
            return
        conn.setblocking(False)
        self.connecting += 1
        if balance is not None:
            self.publish_load()
        loop.create_task(self._connect(conn))

    def _watch(self, sock: socket.socket) -> None:
        if sock in self.listening:
            if not select.select([sock], [], [], 0)[0]:
                self.deferred_since = None  # another process took the connection it left
            asyncio.get_running_loop().add_reader(sock.fileno(), self._accept_one, sock)

    async def _connect(self, conn: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(lambda: HTTPConnection(self), conn)
        except OSError:
            conn.close()
        finally:
            self.connecting -= 1
            if self.balance is not None:
                self.publish_load()

    def publish_load(self) -> None:
        assert self.balance is not None
        self.balance.publish(len(self.connections) + self.connecting)

    def _stop_accepting(self) -> None:
        loop = asyncio.get_running_loop()
        for sock in self.listening:
            loop.remove_reader(sock.fileno())
            sock.close()
        if self.balance is not None:
            self.balance.publish(ConnectionCounts.GONE)  # the others take every connection now
        self.listening = []

    async def start_workers(self, size: int, settings: dict[str, Any]) -> None:
        """`size` worker processes serving the sockets bound by `start` beside this one (rpc/stateless);
        `settings`: chain, deprecated, log_path, debug of the daemon."""
        self.workers = WorkerProcesses(self, size, dict(
            settings, authenticator=self.authenticator, allowlist=self.allowlist, timeout=self.timeout,
            work_queue=self.queue.depth, threads=WORKER_THREADS, auth_failure_delay=self.auth_failure_delay))
        # the main process accepts only while no worker serves (it answers the workers' relays); it
        # keeps the sockets for the workers it starts later
        listening = [socket.socket(fileno=os.dup(sock.fileno())) for s in self.servers
                     for sock in s.sockets]  # type: ignore[attr-defined]
        for server in self.servers:
            server.close()
        self.workers.listening = listening
        await self.workers.start()
        loop = asyncio.get_running_loop()
        for sock in listening:
            sock.setblocking(False)
            self.listening.append(sock)
            loop.add_reader(sock.fileno(), self._accept_one, sock)

    @property
    def ports(self) -> list[int]:
        return self.bound_ports

    async def stop(self) -> None:
        """Refuse new requests, let in-flight ones finish, close everything."""
        self.stopping = True
        for server in self.servers:
            server.close()
        self._stop_accepting()
        if self.workers is not None:
            await self.workers.stop()  # this loop answers their relays meanwhile
        if self.idle is not None:
            await self.idle.wait()
        for connection in list(self.connections):
            connection.close()
        for server in self.servers:
            await server.wait_closed()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.queue.shutdown)
        await loop.run_in_executor(None, self.large.shutdown)
        await loop.run_in_executor(None, self.device_queue.close)

    def begin(self) -> None:
        self.in_flight += 1
        if self.idle is not None:
            self.idle.clear()

    def end(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0 and self.idle is not None:
            self.idle.set()

    # -- deciding a request from its headers -----------------------------------------

    def decide(self, ex: _Exchange, conn: HTTPConnection) -> Any:
        """(status, body, close) when the headers alone decide the reply, an
        awaitable of it for wrong credentials, or None to read the body and run it."""
        if not conn.allowed:
            log.warning("HTTP request from %s rejected: Client network is not allowed RPC access", conn.peer)
            return 403, b"", True
        length_header = ex.headers.get(b"content-length")
        length = None if length_header is None else int(length_header)
        if length is not None and length > MAX_BODY_SIZE:
            return 413, b"", True  # libevent refuses it before Core sees the request
        if ex.method not in _KNOWN_HTTP_METHODS:
            return 405, b"", False
        wallet = None if ex.url == b"/" else wallet_from_uri(ex.url)
        if wallet is False or wallet is True:
            return 404, b"", False
        if self.stopping:
            return 503, b"Request rejected during server shutdown", True
        if self.queue.jobs.qsize() >= self.queue.depth:
            log.warning("Request rejected because http work queue depth exceeded, it can be increased with "
                        "the -rpcworkqueue= setting")
            return 503, _QUEUE_FULL, False
        if ex.method != b"POST":
            return 405, _ONLY_POST, False
        auth_header = ex.headers.get(b"authorization")
        if auth_header is None:
            return 401, b"", False
        user = conn.authenticated(auth_header)
        if user is None:
            log.warning("ThreadRPCServer incorrect password attempt from %s", conn.peer)
            ex.refused = True
            return self._refuse_later()
        ctx = conn.context
        if ctx is None or ctx.wallet_name != wallet or ctx.user != user:
            conn.context = CallContext(node=self.node, wallet_name=wallet, user=user)
        if length is not None and not self.fits(length):
            return _WAIT_FOR_BUDGET
        return None

    def admits(self, length: int) -> bool:
        """The decisions of `decide` that depend on the server's state, not the request's head."""
        return not self.stopping and self.queue.jobs.qsize() < self.queue.depth and self.fits(length)

    # -- the bodies' budget ------------------------------------------------------------------

    def fits(self, length: int) -> bool:
        """A body of `length` may be read now: it fits beside the bodies in flight, and no
        request waits before it (a small one does not wait behind large ones)."""
        return self.buffered + length <= MAX_BUFFERED_BYTES \
            and (not self.budget_waiters or length < LARGE_BODY_LIMIT)

    def wait_for_budget(self, conn: HTTPConnection, ex: _Exchange) -> None:
        self.budget_waiters.append((conn, ex))

    def admit_waiters(self) -> None:
        """Bodies were given back: admit the waiting requests that now fit, oldest first."""
        waiters = self.budget_waiters
        while waiters:
            conn, ex = waiters[0]
            if conn.closed or not ex.waiting:
                waiters.popleft()
                continue
            if self.buffered + ex.length > MAX_BUFFERED_BYTES:
                return
            waiters.popleft()
            conn.admit(ex)

    async def _refuse_later(self) -> tuple[int, bytes, bool]:
        if self.relay is not None:
            await self.relay.refused()  # the main process's gate, for all processes
        else:
            assert self.failures is not None
            await self.failures.wait()
        return 401, b"", False

    # -- running a request -------------------------------------------------------------

    def run(self, body: bytes | bytearray, ctx: CallContext) -> Any:
        """(status, reply bytes) at once for inline calls, else an awaitable of it."""
        if self.relay is not None:
            return self._run_in_worker(body, ctx, self.relay)
        if len(body) >= LARGE_BODY_LIMIT:
            return self._run_sliced([body], ctx)
        if len(body) > INLINE_BODY_LIMIT:
            return self._run_large(body, ctx)
        value = self.dispatcher.parse_body(body)
        if isinstance(value, tuple):
            return value
        lane = self.dispatcher.lane(value)
        if lane == INLINE:
            return self.dispatcher.process_value(value, ctx)
        if lane == DEVICE:
            return self._on_device(value, ctx)
        return self.queue.run(self.dispatcher.process_value, value, ctx)

    def _run_in_worker(self, body: bytes | bytearray, ctx: CallContext, relay: Relay) -> Any:
        """In a worker process: a parse error or a wholly stateless request answered here, as the
        main process would, anything else relayed to it (rpc/stateless)."""
        if len(body) >= LARGE_BODY_LIMIT:
            return relay.call(body, ctx)
        if len(body) > INLINE_BODY_LIMIT:
            return self._run_medium_in_worker(body, ctx, relay)
        value = self.dispatcher.parse_body(body)
        if isinstance(value, tuple):
            return value
        if not self.dispatcher.stateless(value):
            return relay.call(body, ctx)
        if self.dispatcher.lane(value) == INLINE:
            return self.dispatcher.process_value(value, ctx)
        return self.queue.run(self.dispatcher.process_value, value, ctx)

    async def _run_medium_in_worker(self, body: bytes | bytearray, ctx: CallContext,
                                    relay: Relay) -> tuple[int, bytes | None]:
        outcome = await self.queue.run(self._parse_and_run_stateless, body, ctx)
        if outcome is None:
            return await relay.call(body, ctx)
        return outcome

    def _parse_and_run_stateless(self, body: bytes | bytearray, ctx: CallContext) -> Any:
        """On a worker thread of a worker process: parse, then run if every call is stateless, else None."""
        value = self.dispatcher.parse_body(body)
        if isinstance(value, tuple):
            return value
        if not self.dispatcher.stateless(value):
            return None
        return self.dispatcher.process_value(value, ctx)

    async def _run_large(self, body: bytes | bytearray, ctx: CallContext) -> tuple[int, bytes | None]:
        outcome = await self.queue.run(self._parse_and_run, body, ctx)
        if isinstance(outcome, _ForDevice):
            return await self._on_device(outcome.value, ctx)
        return outcome

    def _parse_and_run(self, body: bytes | bytearray, ctx: CallContext) -> Any:
        """On a worker: parse, then run, unless the call needs the device."""
        value = self.dispatcher.parse_body(body)
        if isinstance(value, tuple):
            return value
        if self.dispatcher.lane(value) == DEVICE:
            return _ForDevice(value)
        return self.dispatcher.process_value(value, ctx)

    async def _run_sliced(self, box: list[bytes | bytearray], ctx: CallContext) -> tuple[int, Any]:
        """A large body on the large lane. `box` hands the body over: the lane takes it out,
        so nothing here keeps it alive while it is parsed."""
        self.large_in_flight += 1
        try:
            outcome = await self.large.run(self._parse_and_run_sliced, box, ctx)
        finally:
            self.large_in_flight -= 1
            loop = asyncio.get_running_loop()
            for delay in TRIM_DELAYS:
                loop.call_later(delay, self._give_memory_back)
        if isinstance(outcome, _ForDevice):
            return await self._on_device(outcome.value, ctx)
        return outcome

    def _parse_and_run_sliced(self, box: list[bytes | bytearray], ctx: CallContext) -> Any:
        """On the large lane: parse and run in bounded slices, unless the call needs the device."""
        value = self.dispatcher.parse_large(box.pop())
        if isinstance(value, tuple):
            return value
        if isinstance(value, Batch):
            if value.lane == DEVICE:
                return _ForDevice(value.values())
        elif self.dispatcher.lane(value) == DEVICE:
            return _ForDevice(value)
        return self.dispatcher.process_large(value, ctx)

    def _give_memory_back(self) -> None:
        """Once no large request is in flight (their replies written by now), on the large lane."""
        if self.large_in_flight == 0 and not self.stopping:
            self.large.run(release_free_memory)

    async def _on_device(self, value: Any, ctx: CallContext) -> tuple[int, bytes | None]:
        label = _device_label(value)
        try:
            # a batch is made once: if its device goes, its other calls may not bear repeating
            submit = self.device_queue.submit_once if isinstance(value, list) else self.device_queue.submit
            future = submit(label, self.dispatcher.process_value, value, ctx)
        except DeviceQueueFull:
            log.warning("Request rejected because the device queue is full (%d waiting)", self.device_queue.depth)
            return 503, _QUEUE_FULL
        return await asyncio.wrap_future(future)


class _ForDevice:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _device_label(value: Any) -> str:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("method"), str):
            return item["method"]
    return "batch"


# Headers that make a head unfit to be decided again without parsing: they change how
# the body is framed or what the reply says (`connection`, checked apart, too).
_UNREPEATABLE = frozenset((b"proxy-connection", b"expect", b"transfer-encoding", b"upgrade"))


# What a reply to a repeated head is written for: an HTTP/1.1 request kept alive, without
# a Connection header (the defaults of a new exchange). Only ever read.
_REPEATED = _Exchange()


class _RepeatHead:
    """A request head that passed `decide`, split around its Content-Length digits,
    with the call context it was given."""

    __slots__ = ("prefix", "suffix", "context")

    def __init__(self, prefix: bytes, suffix: bytes, context: CallContext) -> None:
        self.prefix = prefix
        self.suffix = suffix
        self.context = context

    @classmethod
    def learn(cls, data: bytes, context: CallContext) -> _RepeatHead | None:
        """From `data` holding exactly one request (head and whole body) that passed,
        or None when its head is not plain enough: one Content-Length header, no
        folded lines, nothing before the request line."""
        head_end = data.find(b"\r\n\r\n")
        if head_end < 0 or not data.startswith(b"POST "):
            return None
        head = data[:head_end + 2]
        lower = head.lower()
        at = lower.find(b"\r\ncontent-length:")
        if at < 0 or lower.count(b"\r\ncontent-length:") != 1 or b"\r\n " in head or b"\r\n\t" in head:
            return None
        start = at + len(b"\r\ncontent-length:")
        while head[start:start + 1] in (b" ", b"\t"):
            start += 1
        end = head.find(b"\r\n", start)
        digits = head[start:end]
        if not digits.isdigit() or len(data) != head_end + 4 + int(digits):
            return None
        return cls(data[:start], data[end:head_end + 4], context)


class HTTPConnection(asyncio.Protocol):
    """One client connection: parse, decide, run, reply, one request at a time."""

    def __init__(self, server: RPCServer) -> None:
        self.server = server
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.parser: httptools.HttpRequestParser | None = httptools.HttpRequestParser(self)  # None once closed
        self.peer = ""
        self.allowed = False
        self.closed = False
        self.busy = False
        self.write_paused = False
        self.reading_paused = False
        self.current: _Exchange | None = None
        self.exchanges: deque[_Exchange] = deque()
        self.context: CallContext | None = None
        self.auth_cache: tuple[bytes, str] | None = None  # the last header that passed, and its user
        self.last_activity = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.reserved = 0
        self.failed: tuple[int, bytes] | None = None
        # The last request head that may be decided again without parsing (see _repeated_head)
        self.repeat: _RepeatHead | None = None
        self.learn: CallContext | None = None  # set while a request that may be repeated is being run
        self.refusal: asyncio.Task[None] | None = None  # the wait for a wrong password's 401, while it runs
        self.running: _Exchange | None = None  # the request being awaited (_await to _finish)

    # -- transport events --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not an asyncio.Transport
        transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)  # type: ignore[attr-defined]
        peer = transport.get_extra_info("peername")
        self.peer = peer[0] if peer else ""
        self.allowed = self.server.allowlist.allows(self.peer)  # a connection's peer never changes
        self.server.connections.add(self)
        if self.server.balance is not None:
            self.server.publish_load()
        self.last_activity = self.loop.time()
        self.timer = self.loop.call_at(self.last_activity + self.server.timeout, self._check_idle)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server.connections.discard(self)
        if self.server.balance is not None:
            self.server.publish_load()
        if self.timer is not None:
            self.timer.cancel()
        self._release_body_budget()
        if self.refusal is not None:
            self.refusal.cancel()  # a client that has gone gives up its place in the failures' line
            self.refusal = None
        self.exchanges.clear()
        self.current = None
        # Nothing of it waits for the garbage collector: the parser holds this connection's
        # bound callbacks and the timer its idle check, cycles only a full collection frees
        self.parser = None
        self.timer = None
        self.repeat = self.learn = None

    def data_received(self, data: bytes) -> None:
        self.last_activity = self.loop.time()
        refusing = self.refusal is not None
        between = self.current is None and not self.exchanges and not self.busy and self.failed is None
        if between and self.repeat is not None and not self.write_paused and self._repeated_head(data):
            return
        self.learn = None
        if self.parser is None:
            return  # closed
        try:
            self.parser.feed_data(data)
            if self.current is not None:
                self._continue_if_expected()
            elif between and self.learn is not None:
                self.repeat = _RepeatHead.learn(data, self.learn)
        except HTTPError as e:
            self._fail(e.status, e.body)
        except httptools.HttpParserCallbackError as e:  # raised in a callback below
            cause = e.__cause__ or e.__context__
            self._fail(cause.status, cause.body) if isinstance(cause, HTTPError) else self._fail(400, b"")
        except httptools.HttpParserInvalidMethodError:
            self._fail(405, b"")
        except httptools.HttpParserUpgrade:
            pass  # no upgrades: the request is answered as any other
        except httptools.HttpParserError:
            self._fail(400, b"")
        if refusing:
            self._pause_reading()  # a request sent during the delay waits its turn, unread beyond this

    def _repeated_head(self, data: bytes) -> bool:
        """A keep-alive client repeats its request head, Content-Length aside. When
        `data` is exactly one request whose head is the connection's last one byte for
        byte but for that length's digits, it gets the same decision, which only the
        server's state could change (shutdown, a full queue, the body budget): the
        request runs without the parser. False, having done nothing, otherwise."""
        repeat = self.repeat
        assert repeat is not None
        prefix = repeat.prefix
        start = len(prefix)
        if not data.startswith(prefix):
            return False
        digits_end = data.find(b"\r\n", start, start + 10)
        if digits_end <= start or not data.startswith(repeat.suffix, digits_end):
            return False
        digits = data[start:digits_end]
        body_start = digits_end + len(repeat.suffix)
        length = len(data) - body_start
        if not digits.isdigit() or int(digits) != length or length > INLINE_BODY_LIMIT \
                or not self.server.admits(length):
            return False
        try:
            outcome = self.server.run(data[body_start:], repeat.context)
        except Exception as e:  # as _run
            log.error("unexpected %s serving a request", type(e).__name__)
            outcome = 500, b""
        if isinstance(outcome, tuple):
            self._reply(_REPEATED, outcome[0], outcome[1], False)
        else:
            self._await(_Exchange(), outcome)
        return True

    def _continue_if_expected(self) -> None:
        """`Expect: 100-continue` with no body byte arrived yet: invite it (as libevent)."""
        ex = self.current
        if ex is not None and ex.expect_continue and ex.body is not None and ex.received == 0 and not ex.waiting \
                and self.transport is not None and not self.closed:
            ex.expect_continue = False
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def pause_writing(self) -> None:
        self.write_paused = True
        self._pause_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        self._pump()

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()

    def _check_idle(self) -> None:
        """One timer per connection, moved on rather than re-armed per request."""
        if self.closed:
            return
        deadline = self.last_activity + self.server.timeout
        if self.busy or self.loop.time() < deadline:
            self.timer = self.loop.call_at(max(deadline, self.loop.time() + 0.01), self._check_idle)
            return
        if self.exchanges and self.exchanges[0].waiting and self.transport is not None:
            # waited for the bodies' budget as long as a client may be idle: Core's full queue
            self.exchanges[0].waiting = False
            self.transport.write(_head(503, self.exchanges[0].minor, _QUEUE_FULL, False, False, True) + _QUEUE_FULL)
        self.close()

    def _fail(self, status: int, body: bytes) -> None:
        """Bytes that cannot be parsed: read no more, answer the complete requests before
        them, then this error, and close (nothing after it can be trusted)."""
        self.failed = (status, body)
        self._pause_reading()
        self.current = None
        self.exchanges = deque(ex for ex in self.exchanges if ex.complete or ex.early is not None)
        self._pump()

    def _pause_reading(self) -> None:
        if not self.reading_paused and not self.closed and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()

    def _resume_reading(self) -> None:
        if self.reading_paused and not self.closed and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()

    # -- httptools callbacks ------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.current = _Exchange()

    def on_url(self, url: bytes) -> None:
        ex = self.current
        assert ex is not None
        ex.url += url
        ex.header_bytes += len(url)
        if ex.header_bytes > MAX_HEADERS_SIZE:
            raise HTTPError(431)

    def on_header(self, name: bytes, value: bytes) -> None:
        ex = self.current
        assert ex is not None
        size = ex.header_bytes = ex.header_bytes + len(name) + len(value) + 4
        if size > MAX_HEADERS_SIZE:
            raise HTTPError(431)
        name = name.lower()
        headers = ex.headers
        if name not in headers:  # the first one counts, as evhttp_find_header
            headers[name] = value.strip()

    def on_headers_complete(self) -> None:
        ex = self.current
        parser = self.parser
        assert ex is not None and parser is not None  # a callback of the parser's feed_data
        ex.method = parser.get_method()
        ex.keep_alive = parser.should_keep_alive()
        headers = ex.headers
        connection = headers.get(b"connection")
        if not ex.keep_alive or connection is not None or b"proxy-connection" in headers:
            ex.minor = 0 if parser.get_http_version() == "1.0" else 1
            if ex.minor == 0:
                # libevent keeps an HTTP/1.0 connection open for `Connection: keep-alive`
                # only (llhttp also for Proxy-Connection, or keep-alive in a token list)
                ex.keep_alive = connection is not None and connection.lower() == b"keep-alive"
        # else: llhttp keeps an HTTP/1.0 (or x.0) request alive only for a keep-alive
        # Connection or Proxy-Connection header, so this one is HTTP/1.1 or later (minor stays 1)
        early = self.server.decide(ex, self)
        if early is _WAIT_FOR_BUDGET:
            early = None
            ex.waiting = True
        ex.early = early
        if early is None:
            ex.repeatable = (ex.keep_alive and ex.minor == 1 and ex.method == b"POST" and connection is None
                             and b"content-length" in headers and not _UNREPEATABLE.intersection(headers)
                             and ex.header_bytes + 16 < MAX_HEADERS_SIZE)
            length = int(headers.get(b"content-length", b"0") or b"0")
            ex.body = b""
            ex.length = length
            expect = headers.get(b"expect")
            ex.expect_continue = expect is not None and ex.minor == 1 and expect.lower() == b"100-continue"
            if ex.waiting:
                self._pause_reading()  # what this read already holds of its body is kept, no more
                self.server.wait_for_budget(self, ex)
            else:
                self._reserve(ex)
            if not self.exchanges and not self.busy and not self.reading_paused and not self.write_paused:
                self.exchanges.append(ex)  # the only request, and its body is still to come: nothing to run yet
                return
        self.exchanges.append(ex)
        self._pump()

    def _reserve(self, ex: _Exchange) -> None:
        ex.reserved = ex.length
        self.reserved += ex.length
        self.server.buffered += ex.length

    def admit(self, ex: _Exchange) -> None:
        """The server admits `ex`, which waited for the bodies' budget: its body is read now."""
        ex.waiting = False
        self._reserve(ex)
        self.last_activity = self.loop.time()
        self.loop.call_soon(self._admitted)

    def _admitted(self) -> None:
        if not self.closed:
            self._continue_if_expected()
            self._pump()

    def on_body(self, chunk: bytes) -> None:
        ex = self.current
        if ex is None or ex.body is None:
            return  # answered from the headers: the body is dropped as it comes
        received = ex.received
        end = received + len(chunk)
        if not received and end == ex.length:
            ex.body = chunk  # the whole body in one piece, as small requests come: kept, not copied
            ex.received = end
            return
        body = ex.body
        if type(body) is not bytearray:
            # grown as it comes (glibc grows a large block in place, with mremap): a bytearray of
            # the announced 30 MB would be zeroed, its pages touched, in one go on the loop
            body = ex.body = bytearray(body)
        if end > max(ex.length, received):  # chunked, or more than announced: reserve the excess
            if end > MAX_BODY_SIZE:
                raise HTTPError(413)
            extra = end - max(ex.length, received)
            ex.reserved += extra
            self.reserved += extra
            self.server.buffered += extra
        body += chunk
        ex.received = end

    def on_message_complete(self) -> None:
        ex = self.current
        assert ex is not None
        ex.complete = True
        body = ex.body
        if body is not None and ex.received < len(body):
            del body[ex.received:]  # type: ignore[union-attr]  # only a bytearray is ever short
        self.current = None
        if ex.waiting:
            return  # run once admitted (admit, then _pump)
        if ex.early is None and len(self.exchanges) == 1 and not self.busy and not self.write_paused:
            # The common case, what _pump does without its loop: the one request, ready, runs now.
            self.exchanges.popleft()
            if ex.repeatable:
                self.learn = self.context
            outcome = self._run(ex)
            if not isinstance(outcome, tuple):
                self._await(ex, outcome)
                return
            self._reply(ex, outcome[0], outcome[1], False)
            if not self.reading_paused:
                return
        self._pump()

    # -- one request at a time -----------------------------------------------------------

    def _pump(self) -> None:
        """Run the oldest request when it is ready and nothing else runs."""
        while self.exchanges and not self.busy and not self.closed:
            if self.write_paused:
                self._pause_reading()
                return
            ex = self.exchanges[0]
            early = ex.early
            if ex.waiting:
                self._pause_reading()    # until the server admits it
                return
            if early is None and not ex.complete:
                self._resume_reading()   # its body is still coming
                return
            self.exchanges.popleft()
            if early is not None and not isinstance(early, tuple):
                self._await(ex, early)
                return
            if early is not None:
                status, body, close = early
                self._reply(ex, status, body, close)
                continue
            outcome = self._run(ex)
            if isinstance(outcome, tuple):
                self._reply(ex, outcome[0], outcome[1], False)
                continue
            self._await(ex, outcome)
            return
        if self.busy or self.exchanges:
            return
        if self.failed is not None:
            if not self.closed and self.transport is not None:
                status, body = self.failed
                self.transport.write(_head(status, 1, body, False, True, False) + body)
            self.close()
        elif not self.write_paused:
            self._resume_reading()

    def _run(self, ex: _Exchange) -> Any:
        body = ex.body if ex.body is not None else b""
        ex.body = None  # its reservation stays until the reply is written (_reply)
        ctx = self.context
        assert ctx is not None
        try:
            return self.server.run(body, ctx)
        except Exception as e:  # the dispatcher never raises; this keeps the connection answered if it did
            log.error("unexpected %s serving a request", type(e).__name__)
            return 500, b""

    def _await(self, ex: _Exchange, awaitable: Any) -> None:
        self.busy = True
        self.running = ex
        self.server.begin()
        task = self.loop.create_task(self._finish(ex, awaitable))
        if ex.refused:
            # Read on while the delay runs, so that the client's leaving is seen (and the
            # wait cancelled); data_received pauses again if it sends more meanwhile.
            self.refusal = task
            self._resume_reading()
        else:
            self._pause_reading()

    async def _finish(self, ex: _Exchange, awaitable: Any) -> None:
        try:
            try:
                outcome = await awaitable
            except Exception as e:
                log.error("unexpected %s serving a request", type(e).__name__)
                outcome = (500, b"")
            status, body = outcome[0], outcome[1]
            close = outcome[2] if len(outcome) > 2 else False
            del outcome, awaitable
            self._reply(ex, status, body, close)
        finally:
            self._release(ex)
            self.running = None
            self.busy = False
            self.refusal = None
            self.server.end()
            self.last_activity = self.loop.time()
            self._pump()

    def _reply(self, ex: _Exchange, status: int, body: bytes | None, close: bool) -> None:
        body = body or b""
        close = close or not ex.keep_alive
        if status == 200 and not close and ex.minor and body[:1] in (b"{", b"[") and len(body) < 65536 \
                and b"connection" not in ex.headers and not self.closed and self.transport is not None:
            # what _head writes for the common reply (200, JSON, HTTP/1.1, kept alive), in one step
            size = len(body)
            self.transport.write(b"".join((_ok_json_head(), _LENGTH_ENDS[size] if size < 1024 else b"%d\r\n\r\n" % size,
                                           body)))
            self.last_activity = self.loop.time()
            if ex.reserved:
                self._release(ex)
            return
        if not self.closed and self.transport is not None:
            json_body = status not in (204,) and body[:1] in (b"{", b"[")
            head = _head(status, ex.minor, body, json_body, ex.keep_alive,
                         ex.headers.get(b"connection", b"").lower() == b"close")
            self.transport.write(head + body if len(body) < 65536 else head)
            if len(body) >= 65536:
                self.transport.write(body)
            if close:
                self.transport.close()
        self.last_activity = self.loop.time()
        self._release(ex)

    def _release(self, ex: _Exchange) -> None:
        """Give back what `ex` held of the bodies' budget (once)."""
        held = ex.reserved
        if held:
            ex.reserved = 0
            self.reserved -= held
            self.server.buffered -= held
            if self.server.budget_waiters:
                self.server.admit_waiters()

    def _release_body_budget(self) -> None:
        """The connection has gone: what its other requests held. A request running still
        holds its share until it ends (_finish)."""
        running = self.running.reserved if self.running is not None else 0
        for ex in (*self.exchanges, self.current):
            if ex is not None:
                ex.reserved = 0
        self.server.buffered -= self.reserved - running
        self.reserved = running
        if self.server.budget_waiters:
            self.server.admit_waiters()

    # -- credentials --------------------------------------------------------------------

    def authenticated(self, header: bytes) -> str | None:
        """The user for an Authorization header; a header that passed is remembered
        for the connection, so a keep-alive client is checked once."""
        cached = self.auth_cache
        if cached is not None and cached[0] == header:
            return cached[1]
        user = self.server.authenticator.check(header.decode("latin-1"))
        if user is not None:
            self.auth_cache = (header, user)
        return user


def _head(status: int, minor: int, body: bytes, json_body: bool, keep_alive: bool, echo_close: bool) -> bytes:
    """The status line and headers as libevent writes them for Core: Core's own
    headers first (WWW-Authenticate, Content-Type: application/json), then Date and
    Content-Length (HTTP/1.1, or a kept-alive 1.0), libevent's default Content-Type
    when a body-bearing reply has none, and `Connection: close` only when the
    client asked for it. No `Connection: keep-alive` on 1.1."""
    parts = [_status_line(minor, status)]
    if status == 401:
        parts.append(_WWW_AUTHENTICATE)
    if json_body:
        parts.append(_JSON_CONTENT_TYPE)
    needs_body = status != 204 and status >= 200
    if minor >= 1:
        parts.append(b"Date: " + http_date() + b"\r\n")
    elif keep_alive:
        parts.append(b"Connection: keep-alive\r\n")
    if (minor >= 1 or keep_alive) and needs_body:
        parts.append(b"Content-Length: %d\r\n" % len(body))
    if needs_body and not json_body:
        parts.append(_DEFAULT_CONTENT_TYPE)
    if echo_close:
        parts.append(b"Connection: close\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def _ok_json_head() -> bytes:
    """_head(200, 1, body, True, True, False) up to Content-Length's value, made once a second."""
    now = int(time.time())
    if _ok_head_cache[0] != now:
        _ok_head_cache[0] = now
        _ok_head_cache[1] = (b"HTTP/1.1 200 OK\r\n" + _JSON_CONTENT_TYPE + b"Date: " + http_date()
                             + b"\r\nContent-Length: ")
    return _ok_head_cache[1]


_ok_head_cache: list[Any] = [0, b""]
_LENGTH_ENDS = [b"%d\r\n\r\n" % n for n in range(1024)]  # Content-Length's value and the head's end
_STATUS_LINES: dict[tuple[int, int], bytes] = {}


def _status_line(minor: int, status: int) -> bytes:
    line = _STATUS_LINES.get((minor, status))
    if line is None:
        line = _STATUS_LINES[(minor, status)] = b"HTTP/1.%d %d %s\r\n" % (
            minor, status, _REASONS.get(status, "Unknown").encode())
    return line


_date_cache: list[Any] = [0, b""]


def http_date() -> bytes:
    """The Date header's value, formatted once per second."""
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[0], _date_cache[1] = now, _imf_fixdate(now)
    return _date_cache[1]


_DAYS = (b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun")
_MONTHS = (b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec")


def _imf_fixdate(now: int) -> bytes:
    """RFC 7231's IMF-fixdate, as email.utils.formatdate(now, usegmt=True) writes it (without
    importing the email package at start-up), in English whatever the locale."""
    t = time.gmtime(now)
    return b"%s, %02d %s %04d %02d:%02d:%02d GMT" % (_DAYS[t.tm_wday], t.tm_mday, _MONTHS[t.tm_mon - 1],
                                                      t.tm_year, t.tm_hour, t.tm_min, t.tm_sec)


def wallet_from_uri(path: bytes | str) -> str | None | bool:
    """None for `/`, the decoded name for `/wallet/<name>`, False otherwise (404)."""
    if path == b"/" or path == "/":
        return None
    if isinstance(path, bytes):
        path = path.decode("latin-1")
    if path.startswith("/wallet/"):
        return urllib.parse.unquote(path[len("/wallet/"):], errors="surrogateescape")
    return False
