"""Follow a Bitcoin Core-compatible node through its JSON-RPC (-chainsource=http://user:pass@host:port).

Every `poll_interval` seconds: ask the upstream node for its best block;
walk back through getblockheader until a block we know; fetch the missing
blocks with `getblock <hash> 0`; make the upstream best block our tip (the
upstream node decides the chain, reorgs included); then mirror its mempool
(getrawmempool, getrawtransaction). sendrawtransaction is relayed upstream.
"""
import base64
import json
import threading
import urllib.error
import urllib.parse
import urllib.request

from quill.tx.hashes import hash_to_hex, hex_to_hash
from quill.tx.transaction import Transaction

from .block import Block
from .errors import ChainSourceUnavailable, UpstreamError, UpstreamRejected
from .rules import Invalid


class UpstreamRPC:
    """A minimal JSON-RPC 1.0 client with Basic authentication taken from the URL."""

    def __init__(self, url: str, timeout: float = 30.0):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("-chainsource must look like http://user:password@host:port")
        self.endpoint = f"http://{parts.hostname}:{parts.port or 8332}{parts.path or '/'}"
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password or "")
        self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.timeout = timeout
        # Where we connect, never with the credentials: safe to log.
        self.display = f"{parts.hostname}:{parts.port or 8332}"

    def call(self, method, *params):
        body = json.dumps({"jsonrpc": "1.0", "id": "quill", "method": method, "params": list(params)}).encode()
        req = urllib.request.Request(self.endpoint, data=body, method="POST")
        req.add_header("Authorization", self.auth)
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            if not raw:
                raise UpstreamError(f"{self.display} answered HTTP {e.code}") from None
        except (OSError, ValueError) as e:
            raise UpstreamError(f"cannot reach {self.display}: {e}") from None
        try:
            reply = json.loads(raw)
        except ValueError:
            raise UpstreamError(f"{self.display} sent a reply that is not JSON") from None
        error = reply.get("error")
        if error:
            raise UpstreamRejected(error.get("code", -1), error.get("message", ""))
        return reply.get("result")


class Follower:
    def __init__(self, service, url: str, poll_interval: float, log):
        self.service = service
        self.rpc = UpstreamRPC(url)
        self.poll_interval = poll_interval
        self.log = log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="quill-chain-follower", daemon=True)
        self._healthy: bool | None = None

    def start(self) -> None:
        self.log.info("Following the chain of %s", self.rpc.display)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
                if self._healthy is not True:
                    self.log.info("Chain source %s: in sync", self.rpc.display)
                self._healthy = True
            except (UpstreamError, Invalid, ValueError) as e:
                if self._healthy is not False:
                    self.log.warning("Chain source %s: %s", self.rpc.display, e)
                self._healthy = False
            self._stop.wait(self.poll_interval)

    # -- one round ---------------------------------------------------------------------

    def step(self) -> None:
        best = hex_to_hash(self.rpc.call("getbestblockhash"))
        if not self._is_tip(best):
            for block_hash in self._missing_blocks(best):
                if self._stop.is_set():
                    return
                block = Block.from_bytes(bytes.fromhex(self.rpc.call("getblock", hash_to_hex(block_hash), 0)))
                if block.hash() != block_hash:
                    raise UpstreamError(f"block {hash_to_hex(block_hash)} came back with another hash")
                self.service.follow_block(block)
            self.service.follow_tip(best)
        self._sync_mempool()

    def _is_tip(self, block_hash) -> bool:
        with self.service.lock:
            tip = self.service.state.tip
            return tip is not None and tip.hash == block_hash

    def _known(self, block_hash) -> bool:
        with self.service.lock:
            return block_hash in self.service.state.index

    def _missing_blocks(self, best):
        """Hashes from the first block we lack up to `best`, parents first."""
        missing = []
        h = best
        while h is not None and not self._known(h):
            missing.append(h)
            prev = self.rpc.call("getblockheader", hash_to_hex(h), True).get("previousblockhash")
            h = hex_to_hash(prev) if prev else None
        missing.reverse()
        return missing

    def _sync_mempool(self) -> None:
        upstream = [hex_to_hash(t) for t in self.rpc.call("getrawmempool")]
        with self.service.lock:
            ours = set(self.service.state.mempool.entries)
        wanted = set(upstream)
        fetched = []
        for txid in upstream:
            if txid in ours:
                continue
            try:
                fetched.append(Transaction.from_hex(self.rpc.call("getrawtransaction", hash_to_hex(txid))))
            except UpstreamRejected:
                continue  # mined or evicted upstream since the listing
        gone = [t for t in ours if t not in wanted]
        if fetched or gone:
            self.service.follow_mempool(_parents_first(fetched), gone)

    def relay(self, tx) -> None:
        """sendrawtransaction on the upstream node; its error is ours."""
        try:
            self.rpc.call("sendrawtransaction", tx.hex())
        except UpstreamError as e:
            raise ChainSourceUnavailable(f"Chain source unavailable: {e}") from None


def _parents_first(txs):
    """The transactions reordered so that a parent comes before its children (they form no cycles)."""
    by_id = {tx.txid(): tx for tx in txs}
    done, out = set(), []
    for tx in txs:
        stack = [tx]
        while stack:
            cur = stack[-1]
            waiting = [by_id[i.prevout.hash] for i in cur.vin
                       if i.prevout.hash in by_id and i.prevout.hash not in done]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            if cur.txid() not in done:
                done.add(cur.txid())
                out.append(cur)
    return out
