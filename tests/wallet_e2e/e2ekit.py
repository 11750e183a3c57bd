"""Shared helpers for the wallet end-to-end tests: real quilld processes, a
real client (QuillDaemon.rpc over HTTP), keys held by the test as the signing
device would hold them, and the two chain set-ups the scenarios run on.

    "built-in": one quilld runs the regtest chain and the wallets.
    "follower": quilld U runs the chain; quilld F follows it through
                -chainsource and holds the wallets. Chain actions go to U,
                wallet calls to F, and `sync()` waits until F has U's tip and
                mempool (F polls every 0.5 s, so scenarios sync only before
                they look at the wallet: a reorg built on U without syncing
                reaches F as one real multi-block reorg).

Wallet coins are P2WPKH outputs of an imported tpub descriptor and are signed
here with coincurve (test code only); the faucet pays from anyone-can-spend
P2WSH(OP_TRUE) coinbase outputs, which need no key.
"""
import time
from collections import Counter
from decimal import Decimal
from typing import NamedTuple

from coincurve import PrivateKey

from quill.tx.address import encode_destination
from quill.tx.descriptor import add_checksum
from quill.tx.hashes import hash160, hash_to_hex, sha256
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.wallet.bip32 import master_from_seed, secret_of
from quillfw.sighash import segwit_v0 as sighash_segwit_v0
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT, ANYONE_WITNESS
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

COIN = 100_000_000
FEE = 10_000
FOREIGN = b"\x00\x14" + b"\x11" * 20               # nobody's P2WPKH
FOREIGN_ADDRESS = encode_destination(FOREIGN, "regtest")
SIGNALS_RBF = 0xFFFFFFFD
FINAL_NO_RBF = 0xFFFFFFFE
TIME_KEYS = ("time", "timereceived")
FAUCET_BLOCKS = 40
UPSTREAM_AUTH = ("-rpcuser=up", "-rpcpassword=stream")
# The scenarios check bip125-replaceable, which Core 31 (and Quill) show only when asked for.
WALLET_NODE_ARGS = ("-deprecatedrpc=bip125",)


def btc(sats) -> Decimal:
    return Decimal(sats) / COIN


def hexid(txid: bytes) -> str:
    return hash_to_hex(txid)


class Coin(NamedTuple):
    txid: bytes
    n: int
    value: int
    script: bytes


def coins_of(tx) -> list:
    return [Coin(tx.txid(), n, out.value, out.script_pubkey) for n, out in enumerate(tx.vout)]


# -- the test's own "device": a BIP32 seed and its two wpkh chains ----------------


class Keys:
    """wpkh(tpub/0/*) receive and wpkh(tpub/1/*) change descriptors of one seed."""

    DERIVED = 40

    def __init__(self, seed: bytes):
        master = master_from_seed(seed)
        self.tpub = master.neuter().serialize("regtest")
        self.receive = add_checksum(f"wpkh({self.tpub}/0/*)")
        self.change = add_checksum(f"wpkh({self.tpub}/1/*)")
        self._secrets = {}
        for branch in (0, 1):
            node = master.derive(branch)
            for i in range(self.DERIVED):
                sec = secret_of(node.derive(i))
                self._secrets[b"\x00\x14" + hash160(PrivateKey(sec).public_key.format())] = sec

    def import_requests(self, timestamp=0):
        return [{"desc": self.receive, "timestamp": timestamp, "active": True, "range": [0, 20]},
                {"desc": self.change, "timestamp": timestamp, "active": True, "internal": True, "range": [0, 20]}]

    def receive_script(self, i: int) -> bytes:
        """The P2WPKH scriptPubKey of receive key /0/i (keys are derived receive chain first)."""
        return list(self._secrets)[i]

    def secret(self, script: bytes) -> bytes:
        return self._secrets[script]

    def owns(self, script: bytes) -> bool:
        return script in self._secrets


def build_tx(inputs, outputs, keys=None, sequence=FINAL_NO_RBF, locktime=0) -> Transaction:
    """Spend `inputs` [Coin] to `outputs` [(script, sats)], signing each input:
    anyone-can-spend coins with OP_TRUE, P2WPKH coins of `keys` with BIP143 SIGHASH_ALL."""
    tx = Transaction(2, [TxIn(OutPoint(c.txid, c.n), b"", sequence) for c in inputs],
                     [TxOut(v, s) for s, v in outputs], locktime)
    plain_in = [(i.prevout.hash, i.prevout.n, i.sequence) for i in tx.vin]
    plain_out = [(o.value, o.script_pubkey) for o in tx.vout]
    for index, coin in enumerate(inputs):
        if coin.script == ANYONE_SCRIPT:
            tx.vin[index].witness = list(ANYONE_WITNESS)
            continue
        sec = keys.secret(coin.script)
        pub = PrivateKey(sec).public_key.format()
        script_code = b"\x76\xa9\x14" + hash160(pub) + b"\x88\xac"
        digest = sighash_segwit_v0.sighash_tx(tx.version, plain_in, plain_out, tx.locktime, index,
                                              script_code, coin.value, 1)
        tx.vin[index].witness = [PrivateKey(sec).sign(digest, hasher=None) + b"\x01", pub]
    return tx


# -- comparing results ------------------------------------------------------------------


def strip_times(entries):
    return [{k: v for k, v in e.items() if k not in TIME_KEYS} for e in entries]


def multiset(entries):
    """Entries as a multiset (Core's listsinceblock order is unspecified), times left out."""
    return Counter(repr(sorted(e.items())) for e in strip_times(entries))


def project(entries, *keys):
    """Multiset of the chosen fields of each entry (a missing key shows as '<absent>', lists as tuples)."""
    def field(e, k):
        v = e.get(k, "<absent>")
        return tuple(v) if isinstance(v, list) else v
    return Counter(tuple(field(e, k) for k in keys) for e in entries)


def of_tx(entries, txid: bytes):
    return [e for e in entries if e["txid"] == hexid(txid)]


# -- daemons ---------------------------------------------------------------------------------


def wait_for(predicate, timeout=30.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class Net:
    """A chain (driven on `driver`) and the quilld holding the wallets (`node`)."""

    def __init__(self, kind, tmp_factory):
        self.kind = kind
        if kind == "built-in":
            self.driver = self.node = QuillDaemon(tmp_factory.mktemp("builtin"), *WALLET_NODE_ARGS).start()
            self.daemons = [self.node]
        else:
            self.driver = QuillDaemon(tmp_factory.mktemp("upstream"), *UPSTREAM_AUTH).start()
            source = f"-chainsource=http://up:stream@127.0.0.1:{self.driver.port}"
            self.node = QuillDaemon(tmp_factory.mktemp("follower"), source, "-chainpollinterval=100",
                                    *WALLET_NODE_ARGS).start()
            self.daemons = [self.node, self.driver]
        hashes = self.driver.rpc("generatetoaddress", FAUCET_BLOCKS, ANYONE_ADDRESS)
        self.driver.rpc("generatetoaddress", 100, FOREIGN_ADDRESS)
        self._faucet = [Coin(bytes.fromhex(self.driver.rpc("getblock", h)["tx"][0])[::-1], 0, 50 * COIN, ANYONE_SCRIPT)
                        for h in hashes]
        self.sync()
        self._wallets = 0

    def close(self):
        for d in self.daemons:
            d.stop()

    # -- the chain, driven on `driver` -------------------------------------------------

    def sync(self):
        if self.node is self.driver:
            return

        def same():
            try:
                return (self.node.rpc("getbestblockhash") == self.driver.rpc("getbestblockhash")
                        and sorted(self.node.rpc("getrawmempool")) == sorted(self.driver.rpc("getrawmempool")))
            except RPCFailure:
                return False
        wait_for(same, what="the follower")

    def faucet(self) -> Coin:
        return self._faucet.pop(0)

    def mine(self, n=1, address=FOREIGN_ADDRESS, sync=True):
        hashes = self.driver.rpc("generatetoaddress", n, address)
        if sync:
            self.sync()
        return hashes

    def mine_block(self, txs=(), address=FOREIGN_ADDRESS, sync=True) -> str:
        """generateblock: exactly `txs` (Transactions), whatever the mempool holds."""
        block_hash = self.driver.rpc("generateblock", address, [tx.hex() for tx in txs])["hash"]
        if sync:
            self.sync()
        return block_hash

    def mine_empty(self, n, sync=True):
        hashes = [self.mine_block(sync=False) for _ in range(n)]
        if sync:
            self.sync()
        return hashes

    def send(self, *txs, sync=True):
        for tx in txs:
            assert self.driver.rpc("sendrawtransaction", tx.hex()) == tx.txid_hex()
        if sync:
            self.sync()

    def invalidate(self, block_hash, sync=True):
        self.driver.rpc("invalidateblock", block_hash)
        if sync:
            self.sync()

    def reconsider(self, block_hash, sync=True):
        self.driver.rpc("reconsiderblock", block_hash)
        if sync:
            self.sync()

    def tip(self) -> str:
        return self.driver.rpc("getbestblockhash")

    def height(self, block_hash=None) -> int:
        return self.driver.rpc("getblockheader", block_hash or self.tip())["height"]

    def header(self, block_hash):
        return self.driver.rpc("getblockheader", block_hash)

    # -- wallets, on `node` -----------------------------------------------------------------

    def wallet(self, name=None, keys=None, extra=()) -> "W":
        """A new watch-only wallet on `node` holding `keys` (a fresh seed if None)."""
        self._wallets += 1
        name = name or f"w{self._wallets}"
        keys = keys or Keys(sha256(f"{self.kind}/{name}".encode()))
        assert self.node.rpc("createwallet", name, True, True) == {"name": name}
        w = W(self, name, keys)
        res = w.rpc("importdescriptors", keys.import_requests() + list(extra))
        assert all(r["success"] for r in res), res
        return w

    def pay(self, outputs, sync=True):
        """The faucet pays [(script, sats)] in one tx (change back to the faucet); -> the tx."""
        coin = self.faucet()
        rest = coin.value - sum(v for _, v in outputs) - FEE
        tx = build_tx([coin], list(outputs) + [(ANYONE_SCRIPT, rest)])
        self.send(tx, sync=sync)
        return tx


class W:
    """One wallet on the node, through the real HTTP RPC at /wallet/<name>."""

    def __init__(self, net, name, keys):
        self.net = net
        self.name = name
        self.keys = keys

    def rpc(self, method, *params):
        return self.net.node.rpc(method, *params, path=f"/wallet/{self.name}")

    def error(self, method, *params):
        try:
            self.rpc(method, *params)
        except RPCFailure as e:
            return e.code, e.message
        raise AssertionError(f"{method}{params} did not fail")

    def lsb(self, *params):
        return self.rpc("listsinceblock", *params)

    def gettx(self, txid: bytes, *params):
        return self.rpc("gettransaction", hexid(txid), *params)

    def conf(self, txid: bytes) -> int:
        return self.gettx(txid)["confirmations"]

    def new_address(self, label=None, change=False):
        """-> (address, script)."""
        if change:
            address = self.rpc("getrawchangeaddress")
        else:
            address = self.rpc("getnewaddress") if label is None else self.rpc("getnewaddress", label)
        script = bytes.fromhex(self.rpc("getaddressinfo", address)["scriptPubKey"])
        assert self.keys.owns(script)
        return address, script

    def funded(self, *amounts, mine=True):
        """The faucet pays each amount (sats) to a new receive address; -> [Coin] of those outputs."""
        scripts = [self.new_address()[1] for _ in amounts]
        tx = self.net.pay(list(zip(scripts, amounts, strict=True)), sync=not mine)
        if mine:
            self.net.mine()
        return coins_of(tx)[:len(amounts)]

    def spend(self, inputs, outputs, sequence=FINAL_NO_RBF):
        return build_tx(inputs, outputs, self.keys, sequence)
