"""A day of a node's writes, run in-process on the real chain and wallet stores, with a fault
injected at one chosen commit (quill.atomic_store.fault_injection): a full disk, an I/O error,
or kill -9 (`python -m tests.durability.scenario`, which the kill tests run in a child process).

Each step that returns is *acknowledged*: what it wrote is recorded in a journal (in memory, or
one JSON line a step in a file that survives a kill). The checks (checks.py) then reopen the
data directory as a restart would and ask that every acknowledged write is there, that memory
equalled the disk before the restart, and that the wallets equal a fresh rescan.

The steps cover the chain store (blocks, reorgs, the mempool), the wallets (creation,
descriptor imports and their rescan, labels, persistent coin locks, transactions seen in blocks
and the mempool) and settings.json (load_on_startup).
"""
import argparse
import json
import os
import shutil
import signal
import sqlite3
import sys
from collections.abc import Callable

from quill import atomic_store
from quill.atomic_store import StoreWriteFailed
from quill.handlers import wallet_coins
from quill.handlers.errors import guarded_methods
from quill.rpc.errors import RPC_DATABASE_ERROR, RPCError
from quill.tx.hashes import hash_to_hex, sha256
from quill.tx.transaction import OutPoint
from tests.wallet.chainkit import FOREIGN, Kit
from tests.wallet_e2e.e2ekit import Keys

SQLITE_FULL, SQLITE_IOERR_WRITE = 13, 778
FAULTS = ("full", "io", "kill")
COINS_FILE = "coins.json"       # a template's mature coins (make_template)


def keys_of(name: str) -> Keys:
    return Keys(sha256(name.encode()))


class Fault:
    """At the `at`-th commit (1-based) since arming: raise the disk's refusal, or kill -9."""

    def __init__(self, kind: str, at: int) -> None:
        self.kind = kind
        self.at = at
        self.commits = 0
        self.fired = False

    def __call__(self, path: str) -> None:
        self.commits += 1
        if self.commits != self.at:
            return
        self.fired = True
        if self.kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if path.endswith(".json"):
            raise OSError(28 if self.kind == "full" else 5, "injected", path)
        error = sqlite3.OperationalError("database or disk is full" if self.kind == "full" else "disk I/O error")
        error.sqlite_errorcode = SQLITE_FULL if self.kind == "full" else SQLITE_IOERR_WRITE
        raise error


class Journal:
    """What the steps acknowledged, one dict a step; also appended to `path` when given."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self.entries: list[dict] = []
        self.refusals: list[tuple[str, str]] = []   # (step, message) of the steps the fault failed

    def ack(self, **entry) -> None:
        self.entries.append(entry)
        if self.path is not None:
            with open(self.path, "a") as f:
                f.write(json.dumps(entry) + "\n")
                f.flush()
                os.fsync(f.fileno())

    @classmethod
    def read(cls, path: str) -> "Journal":
        journal = cls()
        if os.path.exists(path):
            with open(path) as f:
                journal.entries = [json.loads(line) for line in f if line.strip()]
        return journal


class Scenario:
    """The steps, on a Kit whose chain already holds mature anyone-can-spend coins."""

    def __init__(self, kit: Kit, journal: Journal, coins: list) -> None:
        self.kit = kit
        self.journal = journal
        self.coins = coins
        self.aborted: list[str] = []
        self.current = ""       # the step running (what a commit belongs to)

    def steps(self) -> list[tuple[str, Callable[[], None]]]:
        return [
            ("createwallet w", lambda: self.create_wallet("w")),
            ("import w", lambda: self.import_keys("w")),
            ("mine to w", lambda: self.mine_to("w", 3)),
            ("pay w in the mempool", lambda: self.pay("w", 0)),
            ("setlabel", lambda: self.set_label("w")),
            ("lock a coin", lambda: self.lock_coin("w")),
            ("confirm", lambda: self.mine(1)),
            ("pay w again", lambda: self.pay("w", 1)),
            ("reorg away", self.reorg_away),
            ("reorg back", self.reorg_back),
            ("mine to w2's keys", lambda: self.mine(2, keys_of("w2").receive_script(0))),
            ("createwallet w2", lambda: self.create_wallet("w2")),
            ("import w2", lambda: self.import_keys("w2")),      # its rescan finds those blocks
            ("mine to w2", lambda: self.mine_to("w2", 2)),
        ]

    def run(self) -> None:
        """Each step once; one the fault refused is asked again, and must then work."""
        atomic_store.on_abort(self.aborted.append)
        for name, step in self.steps():
            self.current = name
            if self.aborted:        # the daemon would be shutting down: nothing more is asked of it
                return
            try:
                step()
            except RPCError as e:
                assert e.code == RPC_DATABASE_ERROR, (name, e.code, e.message)
                self.journal.refusals.append((name, e.message))
                step()      # as a user would once the disk has room again: it must work now
            except StoreWriteFailed as e:
                self.journal.refusals.append((name, e.message))
                step()

    # -- the steps: each acknowledges what it wrote once it returned --------------------------

    def create_wallet(self, name: str) -> None:
        self.kit.rpc("createwallet", name, True, True, None, None, None, True)   # load_on_startup
        self.journal.ack(wallet=name)

    def import_keys(self, name: str) -> None:
        results = self.kit.rpc("importdescriptors", keys_of(name).import_requests(), wallet=name)
        for result in results:
            if not result["success"]:
                raise RPCError(result["error"]["code"], result["error"]["message"])
        self.journal.ack(imported=name)

    def address(self, name: str) -> str:
        return self.kit.rpc("getnewaddress", wallet=name)

    def script(self, name: str) -> bytes:
        return bytes.fromhex(self.kit.rpc("getaddressinfo", self.address(name), wallet=name)["scriptPubKey"])

    def mine(self, n: int, script: bytes = FOREIGN) -> None:
        for block_hash in self.kit.chain.generate(script, n, 1_000_000):
            self.journal.ack(block=hash_to_hex(block_hash))

    def mine_to(self, name: str, n: int) -> None:
        self.mine(n, self.script(name))

    def pay(self, name: str, k: int) -> None:
        outpoint, value = self.coins[k]
        tx = self.kit.spend([(outpoint, value)], [(self.script(name), value // 2),
                                                  (FOREIGN, value - value // 2 - 10_000)])
        self.kit.chain.send_transaction(tx)
        self.journal.ack(tx=tx.txid_hex())

    def set_label(self, name: str) -> None:
        address = self.address(name)
        self.kit.rpc("setlabel", address, "durable", wallet=name)
        self.journal.ack(label=[name, address, "durable"])

    def lock_coin(self, name: str) -> None:
        coin = self.kit.rpc("listunspent", 0, wallet=name)[0]
        outpoint = {"txid": coin["txid"], "vout": coin["vout"]}
        self.kit.rpc("lockunspent", False, [outpoint], True, wallet=name)
        self.journal.ack(locked=[name, coin["txid"], coin["vout"]])

    def reorg_away(self) -> None:
        height, _ = self.kit.chain.tip()
        self.invalidated = self.kit.chain.block_hash(height - 1)
        self.kit.chain.invalidate(self.invalidated)
        self.journal.ack(invalidated=hash_to_hex(self.invalidated))
        self.mine(1)        # a shorter branch: reconsiderblock makes the old one win again

    def reorg_back(self) -> None:
        # written first: a kill after reconsiderblock committed but before it returned leaves
        # it done and unacknowledged (acknowledged writes survive; others may too)
        self.journal.ack(reconsidering=hash_to_hex(self.invalidated))
        self.kit.chain.reconsider(self.invalidated)
        self.journal.ack(reconsidered=hash_to_hex(self.invalidated))


class WalletKit(Kit):
    """chainkit's Kit, with the coin calls (lockunspent, listlockunspent, listunspent) too;
    `store`: a postgresql:// URL holding its chain and wallets (the SQLite files by default)."""

    def __init__(self, datadir: str, store: str | None = None) -> None:
        super().__init__(datadir, store=store)
        self.dispatcher.registry.add(guarded_methods(wallet_coins.METHODS))


def prepare(datadir: str, template: str | None = None, store: str | None = None) -> tuple[Kit, list]:
    """The chain before the scenario: 110 blocks, coins of 10 of them mature (no fault yet).
    `template`: a data directory holding that chain already (make_template), copied rather than
    mined again, so that each of the hundreds of fault runs starts from the same chain at once
    (with `store`, the template's database was copied to it: tests.kit.postgres.copy_database)."""
    if template is None:
        os.makedirs(datadir, exist_ok=True)     # quilld's data directory exists before its stores
        kit = WalletKit(datadir, store)
        return kit, kit.coinbase_coins(10)
    shutil.copytree(template, datadir)
    with open(os.path.join(datadir, COINS_FILE)) as f:
        coins = [(OutPoint(bytes.fromhex(txid), n), value) for txid, n, value in json.load(f)]
    return WalletKit(datadir, store), coins


def make_template(datadir: str, store: str | None = None) -> str:
    """prepare's chain in `datadir` (and `store`), closed, with its coins in COINS_FILE: a
    template for prepare."""
    kit, coins = prepare(datadir, store=store)
    kit.close()
    with open(os.path.join(datadir, COINS_FILE), "w") as f:
        json.dump([(outpoint.hash.hex(), outpoint.n, value) for outpoint, value in coins], f)
    return datadir


def reopen(datadir: str, store: str | None = None) -> Kit:
    """The data directory (and store) opened again, as quilld's next start opens it (the
    settings' wallets)."""
    kit = WalletKit(datadir, store)
    kit.manager.load_startup_wallets()
    return kit


def main() -> int:
    parser = argparse.ArgumentParser(description="the durability scenario with one fault (tests only)")
    parser.add_argument("datadir")
    parser.add_argument("--fault", choices=FAULTS, required=True)
    parser.add_argument("--at", type=int, required=True, help="the commit the fault hits, 1-based")
    parser.add_argument("--journal", required=True)
    parser.add_argument("--template", help="a data directory of make_template to start from")
    parser.add_argument("--store", help="a postgresql:// URL holding the chain and the wallets")
    args = parser.parse_args()
    kit, coins = prepare(args.datadir, args.template, args.store)
    atomic_store.fault_injection = Fault(args.fault, args.at)
    Scenario(kit, Journal(args.journal), coins).run()
    atomic_store.fault_injection = None
    kit.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
