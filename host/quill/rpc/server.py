"""HTTP/1.1 server for JSON-RPC, with Core's access rules (core-rpc.md §5.1-5.2).

I/O runs on one asyncio loop, so a slow or half-sent request (slowloris) costs
a coroutine, never a worker. Requests that pass the checks go to a pool of
-rpcthreads workers through a queue bounded by -rpcworkqueue; a request that
finds the queue full is answered 503 at once instead of piling up.

Order of checks per request, as Core: allowed peer (403), HTTP method (405),
URI (404), work queue (503), POST only (405 with a body), credentials (401).
"""

import asyncio
import logging
import queue
import threading
import time
import urllib.parse
from email.utils import formatdate

from quill.rpc.jsonrpc import CallContext

log = logging.getLogger("quill.http")

MAX_HEADERS_SIZE = 8192
MAX_BODY_SIZE = 0x02000000  # 32 MiB, as Core
AUTH_FAILURE_DELAY = 0.25

_REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
            404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 413: "Payload Too Large",
            431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable"}
_KNOWN_HTTP_METHODS = {"GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT", "PATCH"}


class HTTPError(Exception):
    def __init__(self, status, body=b""):
        self.status = status
        self.body = body


class WorkQueue:
    """Core's HTTP work queue: -rpcthreads workers take requests in order from
    a queue that holds at most -rpcworkqueue waiting requests (`full()`).

    A hand-rolled pool rather than ThreadPoolExecutor: a worker hands its
    result straight to the event loop, which roughly halves the per-request
    hand-off cost measured with concurrent.futures.
    """

    _STOP = object()

    def __init__(self, threads: int, depth: int):
        self.depth = depth
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.workers = [threading.Thread(target=self._work, name=f"rpc-worker-{i}", daemon=True)
                        for i in range(threads)]
        for worker in self.workers:
            worker.start()

    def full(self) -> bool:
        return self.jobs.qsize() >= self.depth

    def run(self, fn, *args) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.jobs.put((loop, future, fn, args))
        return future

    def _work(self):
        while True:
            job = self.jobs.get()
            if job is self._STOP:
                return
            loop, future, fn, args = job
            try:
                result, error = fn(*args), None
            except BaseException as e:  # handed to the awaiting coroutine, never lost
                result, error = None, e
            loop.call_soon_threadsafe(_settle, future, result, error)

    def shutdown(self):
        for _ in self.workers:
            self.jobs.put(self._STOP)
        for worker in self.workers:
            worker.join()


def _settle(future, result, error):
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class RPCServer:
    def __init__(self, *, dispatcher, authenticator, allowlist, node, binds,
                 work_queue=64, threads=16, timeout=30.0):
        self.dispatcher = dispatcher
        self.authenticator = authenticator
        self.allowlist = allowlist
        self.node = node
        self.binds = binds
        self.queue = WorkQueue(threads, work_queue)
        self.timeout = timeout
        self.servers = []
        self.connections = set()
        self.in_flight = 0
        self.stopping = False
        self.idle = asyncio.Event()
        self.idle.set()

    # -- lifecycle -------------------------------------------------------

    async def start(self):
        for host, port in self.binds:
            try:
                server = await asyncio.start_server(self._serve_connection, host, port,
                                                    reuse_address=True, limit=MAX_HEADERS_SIZE * 2)
            except OSError as e:
                log.warning("Binding RPC on address %s port %d failed: %s", host, port, e.strerror)
                continue
            log.info("Binding RPC on address %s port %d", host, port)
            self.servers.append(server)
        if not self.servers:
            raise OSError("Unable to bind any endpoint for RPC server")

    @property
    def ports(self):
        return [s.sockets[0].getsockname()[1] for s in self.servers if s.sockets]

    async def stop(self):
        """Refuse new requests, let in-flight ones finish, close everything."""
        self.stopping = True
        for server in self.servers:
            server.close()
        await self.idle.wait()
        for writer in list(self.connections):
            writer.close()
        for server in self.servers:
            await server.wait_closed()
        await asyncio.get_running_loop().run_in_executor(None, self.queue.shutdown)

    # -- one connection ----------------------------------------------------

    async def _serve_connection(self, reader, writer):
        self.connections.add(writer)
        peer = writer.get_extra_info("peername")
        peer_host = peer[0] if peer else ""
        allowed = self.allowlist.allows(peer_host)  # a connection's peer never changes
        try:
            while not self.stopping:
                try:
                    async with asyncio.timeout(self.timeout):
                        request = await read_request(reader)
                except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                    return
                except HTTPError as e:
                    await self._send(writer, e.status, e.body, close=True)
                    return
                if request is None:
                    return
                self._begin()
                try:
                    status, body, close = await self._respond(request, peer_host, allowed)
                    await self._send(writer, status, body, close=close or not request.keep_alive,
                                     json_body=body.startswith((b"{", b"[")))
                finally:
                    self._end()
                if close or not request.keep_alive:
                    return
        finally:
            self.connections.discard(writer)
            writer.close()

    async def _respond(self, request, peer_host, allowed):
        """(status, body bytes, close connection?) for one parsed HTTP request."""
        if not allowed:
            log.warning("HTTP request from %s rejected: Client network is not allowed RPC access", peer_host)
            return 403, b"", True
        if request.method not in _KNOWN_HTTP_METHODS:
            return 405, b"", False
        wallet = wallet_from_uri(request.path)
        if wallet is False:
            return 404, b"", False
        if self.stopping:
            return 503, b"Request rejected during server shutdown", True
        if self.queue.full():
            log.warning("Request rejected because http work queue depth exceeded, "
                        "it can be increased with the -rpcworkqueue= setting")
            return 503, b"Work queue depth exceeded", False
        if request.method != "POST":
            return 405, b"JSONRPC server handles only POST requests", False
        auth_header = request.headers.get("authorization")
        if auth_header is None:
            return 401, b"", False
        user = self.authenticator.check(auth_header)
        if user is None:
            log.warning("ThreadRPCServer incorrect password attempt from %s", peer_host)
            await asyncio.sleep(AUTH_FAILURE_DELAY)
            return 401, b"", False
        ctx = CallContext(node=self.node, wallet_name=wallet, user=user)
        status, text = await self.queue.run(self.dispatcher.process_body, request.body, ctx)
        return status, (text or "").encode("utf-8"), False

    def _begin(self):
        self.in_flight += 1
        self.idle.clear()

    def _end(self):
        self.in_flight -= 1
        if self.in_flight == 0:
            self.idle.set()

    async def _send(self, writer, status, body, close=False, json_body=False):
        headers = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}"]
        if status == 401:
            headers.append('WWW-Authenticate: Basic realm="jsonrpc"')
        if json_body:
            headers.append("Content-Type: application/json")
        elif body:
            headers.append("Content-Type: text/html; charset=ISO-8859-1")
        headers.append("Date: " + http_date())
        if status != 204:
            headers.append(f"Content-Length: {len(body)}")
        headers.append("Connection: close" if close else "Connection: keep-alive")
        writer.write(("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body)
        try:
            await writer.drain()
        except ConnectionError:
            pass


_date_cache: list = [0, ""]


def http_date() -> str:
    """The Date header, formatted once per second."""
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[0], _date_cache[1] = now, formatdate(now, usegmt=True)
    return _date_cache[1]


class HTTPRequest:
    __slots__ = ("method", "path", "version", "headers", "body")

    def __init__(self, method, path, version, headers, body):
        self.method = method
        self.path = path
        self.version = version
        self.headers = headers
        self.body = body

    @property
    def keep_alive(self) -> bool:
        conn = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return conn == "keep-alive"
        return conn != "close"


async def read_request(reader):
    """Parse one HTTP/1.x request; None on a clean EOF between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial.strip():
            return None
        raise
    except asyncio.LimitOverrunError:
        raise HTTPError(431) from None
    if len(head) > MAX_HEADERS_SIZE:
        raise HTTPError(431)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HTTPError(400)
    method, path, version = parts
    headers = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise HTTPError(400)
        headers[name.strip().lower()] = value.strip()
    body = await _read_body(reader, headers)
    return HTTPRequest(method, path, version, headers, body)


async def _read_body(reader, headers) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader)
    length_text = headers.get("content-length", "0")
    if not length_text.isdigit():
        raise HTTPError(400)
    length = int(length_text)
    if length > MAX_BODY_SIZE:
        raise HTTPError(413)
    return await reader.readexactly(length) if length else b""


async def _read_chunked(reader) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError:
            raise HTTPError(400) from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(chunks)
        total += size
        if total > MAX_BODY_SIZE:
            raise HTTPError(413)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


def wallet_from_uri(path: str):
    """None for `/`, the decoded name for `/wallet/<name>`, False otherwise (404)."""
    if path == "/":
        return None
    if path.startswith("/wallet/"):
        return urllib.parse.unquote(path[len("/wallet/"):])
    return False
