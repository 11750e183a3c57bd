"""A regtest chain built on the real Bitcoin Core for the follower's tests and benchmark.

    core = BitcoinD(tmp, "-blockfilterindex=1").start()
    chain = CoreChain(core)
    chain.build(300)            # blocks with a mixed set of transactions, 10 minutes apart
    chain.watched_descriptors   # the public descriptors of the "hot" wallet, as Core lists them

Core runs two wallets: "miner" (coinbases, pays the hot wallet) and "hot" (a descriptor wallet
with keys, receiving on legacy, p2sh-segwit, bech32 and bech32m addresses and spending with
change). The tests watch "hot"'s public descriptors in Quill and in a watch-only Core wallet
and compare their answers. Block times are set with setmocktime, 600 s apart, ending near
now (the clock moves 2 h every 12 blocks), so that a birthday (a descriptor timestamp) selects a height.

SourceGate sits between quilld and Core (-chainsource points at it): it forwards JSON-RPC
bodies, and once `hold_after_blocks` getblock calls have been answered it holds every further
request until `release()`, so a test can kill quilld at a known point of a sync or rescan.
"""
from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from quill.chain.upstream import UpstreamRPC
from tests.kit.bitcoind import RPC_PASSWORD, RPC_USER, BitcoinD

SPACING = 600
MOCKTIME_STEP = 12
BURN_ADDRESS = "bcrt1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq3xueyj"  # nobody's P2WSH
ADDRESS_TYPES = ("legacy", "p2sh-segwit", "bech32", "bech32m")


class CoreChain:
    def __init__(self, core: BitcoinD) -> None:
        self.core = core
        base = f"http://{RPC_USER}:{RPC_PASSWORD}@127.0.0.1:{core.rpc_port}"
        self.node = UpstreamRPC(base + "/")
        self.miner = UpstreamRPC(base + "/wallet/miner")
        self.hot = UpstreamRPC(base + "/wallet/hot")
        self.times: list[int] = []

    def build(self, nblocks: int, txs_per_block: int = 2, start_time: int | None = None,
              wallet_every: int = 1) -> None:
        """Two wallets, 110 blocks of coinbases, then blocks with transactions up to height `nblocks`;
        the hot wallet is paid and spends in one block of `wallet_every` (the others pay strangers)."""
        node = self.node
        t0 = start_time if start_time is not None else int(time.time()) - (nblocks + 30) * SPACING
        self.t0 = t0
        self.txs_per_block = txs_per_block
        self.wallet_every = wallet_every
        # Core's wallets skip blocks older than their birth time: born at the chain's start
        node.call("setmocktime", t0 - 1)
        node.call("createwallet", "miner")
        node.call("createwallet", "hot")
        funds = self.miner.call("getnewaddress")
        self._hot_addresses = self.hot.batch([("getnewaddress", "", ADDRESS_TYPES[i % 4]) for i in range(400)])
        self._away = self.miner.batch([("getnewaddress", "", ADDRESS_TYPES[i % 4]) for i in range(8)])
        self._k = 0
        # 50 coinbases fund the miner wallet; later blocks pay a key nobody holds, so that
        # no wallet's coin selection slows down with thousands of coinbases
        calls: list[tuple[Any, ...]] = []
        for h in range(1, 111):
            calls += [("setmocktime", t0 + h * SPACING), ("generatetoaddress", 1, funds if h <= 50 else BURN_ADDRESS)]
        for i in range(0, len(calls), 100):
            node.batch(calls[i:i + 100])
        self.height = 110
        self.extend(nblocks - 110)

    def extend(self, nblocks: int) -> None:
        """`nblocks` more blocks, each with the miner paying the hot wallet and the hot wallet spending."""
        node = self.node
        for h in range(self.height + 1, self.height + nblocks + 1):
            if h % MOCKTIME_STEP == 0:
                node.call("setmocktime", self.t0 + h * SPACING)
            k = self._k
            if h % self.wallet_every:
                # a block the hot wallet has no part in
                amounts = {self._away[(k + i) % 8]: round(0.01 + 0.001 * ((k + i) % 50), 8)
                           for i in range(self.txs_per_block)}
                self.miner.batch_outcomes([("sendmany", "", amounts)])
                self._k += self.txs_per_block
                node.call("generatetoaddress", 1, BURN_ADDRESS)
                continue
            amounts = {self._hot_addresses[(k + i) % 400]: round(0.01 + 0.001 * ((k + i) % 50), 8)
                       for i in range(self.txs_per_block)}
            self.miner.batch_outcomes([("sendmany", "", amounts)])
            if h % 100 == 0:
                # consolidate: one transaction with every coin of the hot wallet (many inputs, mixed types)
                self.hot.batch_outcomes([("sendall", [self._hot_addresses[h % 400]])])
            else:
                self.hot.batch_outcomes([("sendtoaddress", self._away[k % 8], 0.005)] +
                                        [("sendtoaddress", self._hot_addresses[(k * 7) % 400], 0.002)][: k % 2])
            self._k += self.txs_per_block
            node.call("generatetoaddress", 1, BURN_ADDRESS)
        self.height = node.call("getblockcount")

    def time_of(self, height: int) -> int:
        return int(self.node.call("getblockheader", self.node.call("getblockhash", height))["time"])

    def watched_descriptors(self, timestamp: int) -> list[dict[str, Any]]:
        """The hot wallet's public descriptors as importdescriptors requests with `timestamp`."""
        listed = self.hot.call("listdescriptors")["descriptors"]
        out = []
        for d in listed:
            req = {"desc": d["desc"], "timestamp": timestamp, "active": d["active"],
                   "range": d["range"], "next_index": d["next"]}
            if d.get("internal"):
                req["internal"] = True
            out.append(req)
        return out


# Times differ by nature.
IGNORED = ("time", "timereceived")


def wait_for(predicate, timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:       # the daemon is not answering yet
            pass
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def strip(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in IGNORED}


def as_multiset(entries: list[dict[str, Any]]) -> Counter:
    """Core's listsinceblock order between transactions of one block is not specified."""
    return Counter(repr(sorted(strip(e).items())) for e in entries)


class Reference:
    """Core's answers for a watch-only wallet `w` holding the hot wallet's descriptors."""

    def __init__(self, chain: CoreChain, descriptors: list[dict[str, Any]]) -> None:
        self.chain = chain
        core = chain.core
        core.rpc("createwallet", "w", True, True)
        self.call = lambda method, *params: core.rpc(method, *params, wallet="w")
        assert all(r["success"] for r in self.call("importdescriptors", descriptors))

    def answers(self) -> tuple[Any, ...]:
        return answers_of(self.call)


def answers_of(call) -> tuple[Any, ...]:
    since = call("listsinceblock", "")
    txids = sorted({e["txid"] for e in since["transactions"]})
    txs = {t: strip(call("gettransaction", t)) for t in txids}
    for t in txs.values():
        t["details"] = sorted((strip(d) for d in t["details"]), key=repr)
    return as_multiset(since["transactions"]), since["removed"], since["lastblock"], txs



class SourceGate:
    """An HTTP forwarder in front of Core that can hold requests after a number of getblock calls."""

    def __init__(self, core: BitcoinD) -> None:
        self.core = core
        self.blocks_served = 0
        self.hold_after_blocks: int | None = None
        self.method = "getblock"
        self.refused: set[str] = set()      # methods answered "Method not found" (an older Core)
        self.served: Counter = Counter()    # calls forwarded, by method
        self._open = threading.Event()
        self._open.set()
        gate = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                refusal = gate._refusal(body)
                if refusal is not None:
                    self.send_response(404)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(refusal)))
                    self.end_headers()
                    self.wfile.write(refusal)
                    return
                gate._before(body)
                req = urllib.request.Request(gate.core.url, data=body, method="POST",
                                             headers={"Authorization": self.headers["Authorization"],
                                                      "Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=600) as reply:
                        status, data = reply.status, reply.read()
                except urllib.error.HTTPError as e:
                    status, data = e.code, e.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{RPC_USER}:{RPC_PASSWORD}@127.0.0.1:{self.port}"

    def _refusal(self, body: bytes) -> bytes | None:
        """Core's answer to a single call of a method it lacks, when the call's method is refused."""
        try:
            parsed = json.loads(body)
        except ValueError:
            return None
        if isinstance(parsed, dict) and parsed.get("method") in self.refused:
            return json.dumps({"result": None, "error": {"code": -32601, "message": "Method not found"},
                               "id": parsed.get("id")}).encode()
        return None

    def _before(self, body: bytes) -> None:
        self._open.wait()
        try:
            parsed = json.loads(body)
        except ValueError:
            return
        calls = parsed if isinstance(parsed, list) else [parsed]
        self.served.update(c.get("method") for c in calls if isinstance(c, dict))
        n = sum(1 for c in calls if isinstance(c, dict) and c.get("method") == self.method)
        if n and self.hold_after_blocks is not None and self.blocks_served >= self.hold_after_blocks:
            self._open.clear()
            self._open.wait()
        self.blocks_served += n

    def hold_after(self, nblocks: int, method: str = "getblock") -> None:
        """Hold every request once `nblocks` calls of `method` have been answered."""
        self.blocks_served = 0
        self.method = method
        self.hold_after_blocks = nblocks

    def holding(self) -> bool:
        return not self._open.is_set()

    def release(self) -> None:
        self.hold_after_blocks = None
        self._open.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()


class SubmittedChain:
    """A long chain made here and given to Core with submitblock (for bench_follow's 20,000 blocks,
    where Core's own wallet would take hours): every block after 110 carries two transactions from
    anyone-can-spend coins paying mixed output types (P2PKH, P2SH, P2WPKH, P2TR, P2WSH); one block in
    `wallet_every` pays the watched keys (tests.wallet_e2e.e2ekit.Keys: wpkh receive and change
    chains), and one in 3 x `wallet_every` spends a watched coin with change. Blocks are 600 s apart."""

    def __init__(self, core: BitcoinD, keys: Any, wallet_every: int = 10) -> None:
        from random import Random
        self.core = core
        self.node = UpstreamRPC(core.url_for_follower, timeout=600)
        self.keys = keys
        self.wallet_every = wallet_every
        self.rng = Random(16)
        self.times: list[int] = []

    def build(self, nblocks: int) -> None:
        from quill.chain.block import Block, BlockHeader
        from quill.chain.miner import add_witness_commitment, coinbase_tx, grind
        from quill.chain.params import POW_LIMIT_REGTEST, block_subsidy, chain_params
        from tests.kit.anyone import ANYONE_SCRIPT
        from tests.wallet_e2e.e2ekit import Coin, build_tx
        params = chain_params("regtest")
        rng = self.rng
        t0 = int(time.time()) - (nblocks + 10) * SPACING
        prev = bytes.fromhex(self.node.call("getblockhash", 0))[::-1]
        scripts = list(self.keys._secrets)
        receive, change = scripts[:40], scripts[40:]
        chains: list[Any] = []          # two anyone-can-spend coins, each paying one tx per block
        watched: list[Any] = []
        pending: list[str] = []
        for h in range(1, nblocks + 1):
            txs = []
            if h > 110:
                for c in range(2):
                    coin = chains[c]
                    outs = [(foreign(rng), 1000 + rng.randrange(9000)) for _ in range(3)]
                    if c == 0 and h % self.wallet_every == 0:
                        outs[0] = (receive[(h // self.wallet_every) % 40], 200_000 + h)
                    left = coin.value - sum(v for _, v in outs) - 2000
                    tx = build_tx([coin], outs + [(ANYONE_SCRIPT, left)])
                    txs.append(tx)
                    chains[c] = Coin(tx.txid(), len(outs), left, ANYONE_SCRIPT)
                    if c == 0 and h % self.wallet_every == 0:
                        watched.append(Coin(tx.txid(), 0, outs[0][1], outs[0][0]))
                if h % (3 * self.wallet_every) == 5 and watched:
                    coin = watched.pop(0)
                    keep = change[(h // self.wallet_every) % 40]
                    txs.append(build_tx([coin], [(foreign(rng), coin.value // 2), (keep, coin.value // 2 - 1500)],
                                        self.keys))
                    watched.append(Coin(txs[-1].txid(), 1, coin.value // 2 - 1500, keep))
            cb = coinbase_tx(h, ANYONE_SCRIPT, block_subsidy(h, params))
            block = Block(BlockHeader(0x20000000, prev, bytes(32), t0 + h * SPACING, 0x207FFFFF, 0), [cb] + txs)
            add_witness_commitment(block)
            grind(block, POW_LIMIT_REGTEST, 1 << 20)
            prev = block.hash()
            self.times.append(t0 + h * SPACING)
            if h <= 2:
                chains.append(Coin(cb.txid(), 0, cb.vout[0].value, ANYONE_SCRIPT))
            pending.append(block.serialize().hex())
            if len(pending) == 50 or h == nblocks or h == 110:
                refused = [r for r in self.node.batch([("submitblock", b) for b in pending]) if r is not None]
                if refused:
                    raise RuntimeError(f"Core refused a block: {refused[0]}")
                pending = []
        self.height = self.node.call("getblockcount")

    def time_of(self, height: int) -> int:
        return self.times[height - 1]


def foreign(rng: Any) -> bytes:
    """Somebody else's output, of one of the five common types."""
    return [b"\x76\xa9\x14" + rng.randbytes(20) + b"\x88\xac", b"\xa9\x14" + rng.randbytes(20) + b"\x87",
            b"\x00\x14" + rng.randbytes(20), b"\x51\x20" + rng.randbytes(32),
            b"\x00\x20" + rng.randbytes(32)][rng.randrange(5)]
