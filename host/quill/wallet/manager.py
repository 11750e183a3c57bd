"""Loaded wallets: create, load, unload, /wallet/<name> routing, and the one
chain subscription that feeds every loaded wallet.

Lock order everywhere: the chain's lock, then the manager's, then a wallet's.
Chain notifications already hold the chain's lock; RPC calls take it through
`call()`.
"""

import logging
import os
import threading
import time

from quill.atomic_store import StoreWriteFailed, abort_node
from quill.wallet.catalog import FileCatalog
from quill.wallet.errors import RescanAborted, WalletAlreadyLoaded, WalletError, WalletNotFound, WalletNotSpecified
from quill.wallet.names import InvalidWalletName, check_wallet_name
from quill.wallet.paths import VERIFY_FAILED
from quill.wallet.settings import SettingsError, wallet_names
from quill.wallet.wallet import Wallet

log = logging.getLogger("quill.wallet")

TIMESTAMP_WINDOW = 2 * 60 * 60  # Core's rescan slack before a key's birth time
PROGRESS_EVERY = 1000           # blocks between two records of a rescan's progress in the wallet file
RESCANNING = "Wallet is currently rescanning. Abort existing rescan or wait."
NO_WALLET = ("No wallet is loaded. Load a wallet using loadwallet or create a new one with createwallet. "
             "(Note: A default wallet is no longer automatically created)")
NOT_LOADED = "Requested wallet does not exist or is not loaded"
NOT_SPECIFIED = "Wallet file not specified (must request wallet RPC through /wallet/<filename> uri-path)."


# -- chain adapter: the few ChainService answers the wallet needs ----------------


def fork_height(chain, block_hash) -> int:
    """Height of the last block `block_hash` shares with the active chain."""
    return chain.find_fork(block_hash)


class WalletManager:
    def __init__(self, chain, chain_name, chain_datadir, keypool=None, catalog=None, follows_chain=True,
                 on_loaded=None):
        """`catalog`: where the wallets are (quill.wallet.catalog); by default one SQLite file
        each under <chain_datadir>/wallets. `follows_chain` False (a replica, docs/postgresql.md):
        the wallets take no chain event and write nothing on load; the leading quilld records the
        chain in them and this one reads them again when told (refresh). `on_loaded(name)`: a
        wallet was created or loaded here."""
        self.follows_chain = follows_chain
        self.on_loaded = on_loaded or (lambda name: None)
        self.chain = chain
        self.chain_name = chain_name
        self.walletdir = os.path.join(chain_datadir, "wallets")
        self.settings_path = os.path.join(chain_datadir, "settings.json")
        self.keypool = keypool
        self.lock = threading.RLock()
        self.wallets = {}   # name -> Wallet, in load order (listwallets)
        self.behind = set()  # names of wallets that missed a chain event (see _fan_out)
        self.catalog = catalog if catalog is not None else FileCatalog(self.walletdir, self.settings_path)
        if chain is not None and follows_chain:
            chain.subscribe(self)

    def chain_lock(self):
        return self.chain.lock if self.chain is not None else threading.RLock()

    # -- chain notifications: fan out to every loaded wallet --------------------

    def block_connected(self, block, height):
        self._fan_out(lambda w: w.block_connected(block, height))

    def block_disconnected(self, block, height):
        self._fan_out(lambda w: w.block_disconnected(block, height))

    def transaction_added_to_mempool(self, tx):
        self._fan_out(lambda w: w.transaction_added_to_mempool(tx))

    def transaction_removed_from_mempool(self, tx, reason=None):
        self._fan_out(lambda w: w.transaction_removed_from_mempool(tx, reason))

    def _fan_out(self, deliver):
        """One chain event to every loaded wallet. A wallet that cannot record an event has fallen
        behind the chain: it takes no later event (which would be written above the hole), and the
        daemon stops; the next start resumes the wallet from its last recorded block."""
        with self.lock:
            for w in list(self.wallets.values()):
                if w.name in self.behind:
                    continue
                try:
                    deliver(w)
                except StoreWriteFailed as e:
                    self.behind.add(w.name)
                    abort_node(f"{e.cause} Wallet {w.name!r} could not record a chain event: shutting down; "
                               "the next start resumes it from its last recorded block.")

    # -- routing (Core's GetWalletForJSONRPCRequest) ------------------------------

    def resolve(self, wallet_name):
        with self.lock:
            if wallet_name is not None:
                w = self.wallets.get(wallet_name)
                if w is None:
                    raise WalletNotFound(NOT_LOADED)
                return w
            if len(self.wallets) == 1:
                return next(iter(self.wallets.values()))
            if not self.wallets:
                raise WalletNotFound(NO_WALLET)
            raise WalletNotSpecified(NOT_SPECIFIED)

    # -- settings -------------------------------------------------------------------

    def _settings(self):
        """The settings to update (start-up refused any it could not read; {} if one went bad since)."""
        try:
            return self.catalog.read_settings()
        except SettingsError:
            return {}

    def _update_autoload(self, name, load_on_startup):
        if load_on_startup is None:
            return
        data = self._settings()
        try:
            names = [n for n in wallet_names(data) if n != name]
        except SettingsError:
            names = []
        if load_on_startup:
            names.append(name)
        data["wallet"] = names
        self.catalog.write_settings(data)

    def load_startup_wallets(self):
        """The wallets settings.json names, each checked first as Core's VerifyWallets does: a
        bad file, value, name or path refuses start-up (SettingsError, in Core's words), a
        wallet that is not there is skipped with Core's warning."""
        names = wallet_names(self.catalog.read_settings())
        present = []
        for name in names:
            try:
                check_wallet_name(name)
            except InvalidWalletName as e:
                raise SettingsError(e.message) from None
            try:
                if not self.catalog.startup_check(name):
                    log.warning("Skipping -wallet path that doesn't exist. Failed to load database path '%s'. "
                                "Path does not exist.", self.catalog.wallet_path(name))
                    continue
            except WalletError as e:
                raise SettingsError(e.message.removeprefix(VERIFY_FAILED)) from None
            present.append(name)
        for name in present:
            try:
                self.load(name, None)
            except WalletError as e:
                log.warning("Could not load wallet %s at startup: %s", name, e.message)

    # -- lifecycle ---------------------------------------------------------------------

    def create(self, name, blank, load_on_startup, signer_descriptors=None):
        """A new wallet; with `signer_descriptors` ([(descriptor, internal)], from
        quill.wallet.external_signer) an external-signer wallet holding them, as Core's
        SetupDescriptorScriptPubKeyMans: each active, ranged over the keypool, born now.
        All or nothing: when any step fails (a full disk), what it made is removed again."""
        with self.chain_lock(), self.lock:
            prepared = self.catalog.prepare_new(name)
            store = None
            try:
                store = self.catalog.open(name, create=True)
                with store.batch():
                    store.set_meta("blank", int(bool(blank) and signer_descriptors is None))
                    store.set_meta("disable_private_keys", 1)
                    if signer_descriptors is not None:
                        store.set_meta("external_signer", 1)
                    if self.chain is not None:
                        height, tip_hash = self.chain.tip()
                        store.set_meta("tip_height", height)
                        store.set_meta("tip_hash", tip_hash)
                wallet = self._open(name, store)
                if signer_descriptors:
                    now = int(time.time())
                    with store.batch():
                        for desc, internal in signer_descriptors:
                            wallet.add_descriptor(desc, now, 0, wallet.keypool, 0, True, internal, None)
                self._update_autoload(name, load_on_startup)
            except BaseException as e:
                self.wallets.pop(name, None)
                self.catalog.discard_new(name, store, prepared, isinstance(e, StoreWriteFailed))
                raise
        self.on_loaded(name)
        return wallet

    def check_absent(self, name):
        """Core's MakeWalletDatabase for a new wallet: its database must not exist yet."""
        self.catalog.check_absent(name)

    def load(self, name, load_on_startup):
        with self.chain_lock(), self.lock:
            if name in self.wallets:
                raise WalletAlreadyLoaded(f'Wallet "{name}" is already loaded.')
            self.catalog.check_loadable(name)
            store = self.catalog.open(name, create=False)
            try:
                wallet = self._open(name, store)
                self._update_autoload(name, load_on_startup)
            except BaseException:
                self.wallets.pop(name, None)
                self.catalog.release(name, store)
                raise
        self.on_loaded(name)
        return wallet

    def follow(self, name):
        """The leader's side of a wallet another quilld created or loaded: loaded here too (when
        it is not), so that it follows the chain."""
        with self.lock:
            if name in self.wallets:
                return
        try:
            self.load(name, None)
        except WalletAlreadyLoaded:
            pass
        except WalletError as e:
            log.warning("Could not follow wallet %s loaded by another quilld: %s", name, e.message)

    def refresh(self, name, newest):
        """Another quilld committed changes to wallet `name` up to version `newest` (quill_versions):
        the memory of the tables they wrote is read again from the store (descriptors, scripts,
        labels, transactions, cached credit, persistent coin locks; all of it when the store's
        change log does not go back to this process's version)."""
        with self.chain_lock(), self.lock:
            wallet = self.wallets.get(name)
            if wallet is None:
                return
            with wallet.lock:
                db = wallet.store.db
                if newest <= db.known_version:
                    return
                self._reread(wallet, db.tables_changed(newest))
                db.known_version = newest

    @staticmethod
    def _reread(wallet, tables):
        log.debug("Wallet %s changed by another quilld: %s read again", wallet.name,
                  "everything" if tables is None else ", ".join(sorted(tables)) or "nothing")
        wallet.refresh(tables)

    def _open(self, name, store):
        kwargs = {} if self.keypool is None else {"keypool": self.keypool}
        wallet = Wallet(name, store, self.chain_name, **kwargs)
        if hasattr(store.db, "on_stale"):      # a PostgreSQL store: other processes write it too
            store.db.on_stale = lambda tables: self._reread(wallet, tables)
        if self.chain is not None and self.follows_chain:
            self.catch_up(wallet)
        self.wallets[name] = wallet
        return wallet

    def unload(self, name, load_on_startup):
        with self.chain_lock(), self.lock:
            if name not in self.wallets:
                raise WalletNotFound(NOT_LOADED)
            self._update_autoload(name, load_on_startup)   # first: a refused write unloads nothing
            wallet = self.wallets.pop(name)
            self.catalog.release(name, wallet.store)

    def close(self):
        with self.lock:
            for name, wallet in self.wallets.items():
                self.catalog.release(name, wallet.store)
            self.wallets.clear()
            self.catalog.close()

    # -- what the chain must deliver (follower mode) -----------------------------------------

    def scan_hint(self):
        """The blocks the loaded wallets need (quill.chain.follower.ScanHint): from the earliest
        descriptor time less TIMESTAMP_WINDOW, and only those touching the wallets' scripts."""
        from quill.chain.follower import hint_union
        with self.lock:
            wallets = list(self.wallets.values())
        return hint_union([wallet_hint(w) for w in wallets])

    # -- catching up and rescanning --------------------------------------------------------

    def catch_up(self, wallet):
        """Finish a rescan a stop interrupted, resume from the last processed block (its fork
        point if it left the active chain; blocks older than the wallet's birthday are skipped),
        then take in the node's mempool (core-wallet.md §4.1: rescan does)."""
        chain = self.chain
        wallet.reset_for_load(chain.is_in_active_chain)
        height, tip_hash = wallet.tip()
        if tip_hash is not None and not chain.is_in_active_chain(tip_hash):
            height = fork_height(chain, tip_hash)
            with wallet.store.batch():
                wallet.store.set_meta("tip_height", height)
                wallet.store.set_meta("tip_hash", chain.block_hash(height))
        chain_height = chain.tip()[0]
        pending = wallet.store.get_meta("rescan_next")
        if pending is not None:
            stop = min(int(wallet.store.get_meta("rescan_stop")), chain_height)
            log.info("Wallet %s: resuming the rescan interrupted at height %s", wallet.name, pending)
            self.rescan(wallet, int(pending), stop)
        since = wallet_hint(wallet).since
        start = height + 1
        if since is None:
            start = chain_height + 1
        elif start <= chain_height:
            start = max(start, self.first_height_at(since, start))
        self.rescan(wallet, start, chain_height, live_tip=True)

    def rescan(self, wallet, start, stop, live_tip=False, reserved=False):
        """Core's ScanForWalletTransactions over the active blocks [start, stop]. Returns the last
        height scanned, or raises RescanAborted (abortrescan).

        The rescan holds no lock while it waits for blocks: each block is given to the wallet under
        the chain's and the wallet's locks, so getwalletinfo shows `scanning` meanwhile and new blocks
        keep arriving. A block that left the active chain by then is not given to the wallet; the scan
        goes on from the fork on the new branch. `reserved`: the caller holds the wallet's rescan
        reservation (Wallet.reserve_rescan); otherwise it is taken here (WalletError when another
        rescan holds it). A pending-rescan record in the wallet file, advanced with each block that
        changed the wallet and every PROGRESS_EVERY blocks, lets a restart finish the rescan (catch_up;
        blocks seen twice change nothing). `live_tip`: the wallet's last processed block becomes
        `stop` at the end."""
        start = max(0, start)
        if stop >= start:
            if not reserved and not wallet.reserve_rescan():
                raise WalletError(RESCANNING)
            try:
                self._scan(wallet, start, stop)
            finally:
                if not reserved:
                    wallet.release_rescan()
        with self.chain_lock(), wallet.lock:
            if live_tip and stop > wallet.tip()[0] and self.chain.tip()[0] >= stop:
                with wallet.store.batch():
                    wallet.store.set_meta("tip_height", stop)
                    wallet.store.set_meta("tip_hash", self.chain.block_hash(stop))
            # as Core's rescan: the mempool's transactions that touch the wallet's scripts,
            # new ones included (core-wallet.md §4.1)
            for tx in self.chain.mempool_txs():
                wallet.transaction_added_to_mempool(tx)
        return stop

    def _scan(self, wallet, start, stop):
        with wallet.store.batch():
            wallet.store.set_meta("rescan_next", start)
            wallet.store.set_meta("rescan_stop", stop)
        wallet.abort_rescan = False
        wallet.scanning_range(start, stop)
        started = time.time()
        fetched = 0
        h = start
        aborted = False
        while h <= stop:
            moved = None
            blocks = self.chain.scan(h, stop, lambda: wallet_hint(wallet, everything=True),
                                     should_stop=lambda: wallet.abort_rescan)
            try:
                for k, block in blocks:
                    with self.chain_lock():
                        if not self.chain.is_in_active_chain(block.hash()):
                            # reorganised away since it was fetched: go on from the fork, on the new branch
                            fork = self.chain.find_fork(block.hash())
                            moved = k if fork is None else min(k, fork + 1)
                            break
                        checkpoint = (k - h) % PROGRESS_EVERY == PROGRESS_EVERY - 1 or k == stop
                        with wallet.store.batch():
                            before = wallet.store.changes()
                            wallet.block_connected(block, k, rescan=True,
                                                   move_tip=checkpoint or any(True for _ in block.indexed_txs()))
                            if checkpoint or wallet.store.changes() != before:
                                wallet.store.set_meta("rescan_next", k + 1)
                    wallet.scanning_at(k)
                    fetched += 1
            finally:
                blocks.close()
            aborted = wallet.abort_rescan
            if moved is None or aborted:
                break
            h, stop = moved, min(stop, self.chain.tip()[0])
        log.info("Rescan of %s: heights %d to %d, %d blocks read, %.1f s%s", wallet.name, start, stop,
                 fetched, time.time() - started, " (aborted)" if aborted else "")
        with wallet.store.batch():
            wallet.store.delete_meta("rescan_next")
            wallet.store.delete_meta("rescan_stop")
        if aborted:
            raise RescanAborted("Rescan aborted by user.")

    def first_height_at(self, timestamp, lowest=0):
        """Core's FindFirstBlockWithTimeAndHeight: the first active height >= `lowest` whose block
        time (or any earlier block's: Core uses the running maximum) is >= `timestamp`."""
        chain = self.chain
        tip_height = chain.tip()[0]
        start = tip_height + 1
        h = tip_height
        while h >= lowest:
            if chain.header_info(chain.block_hash(h)).time < timestamp:
                break
            start = h
            h -= 1
        return start

    def note_rescan(self, wallet, timestamp):
        """Record, inside the wallet's running batch, the rescan from `timestamp` that an import
        needs: committed with the import, so a restart finishes it should the rescan itself fail
        (a full disk) or the process die first (catch_up)."""
        if self.chain is None:
            return
        with self.chain_lock():
            start = self.first_height_at(timestamp - TIMESTAMP_WINDOW)
            stop = self.chain.tip()[0]
        if start > stop:
            return
        pending = wallet.store.get_meta("rescan_next")
        if pending is not None:
            start = min(start, int(pending))
            stop = max(stop, int(wallet.store.get_meta("rescan_stop")))
        wallet.store.set_meta("rescan_next", start)
        wallet.store.set_meta("rescan_stop", stop)

    def rescan_from_time(self, wallet, timestamp, reserved=False):
        """Rescan every block whose time is within TIMESTAMP_WINDOW of `timestamp` or later."""
        with self.chain_lock():
            start = self.first_height_at(timestamp - TIMESTAMP_WINDOW)
            stop = self.chain.tip()[0]
        self.rescan(wallet, start, stop, reserved=reserved)
        return start


def wallet_hint(wallet, everything=False):
    """One wallet's ScanHint: blocks from its earliest descriptor time less TIMESTAMP_WINDOW
    (`everything`: from the start), touching its scripts; the version grows with the scripts."""
    from quill.chain.follower import ScanHint
    with wallet.lock:
        first = wallet.birthday()
        if first is None:
            return ScanHint(None, None)
        scripts = wallet.script_set()
        # the version changes with the wallet, its scripts and its birthday
        version = hash((id(wallet), len(scripts), first))
        return ScanHint(0 if everything else first - TIMESTAMP_WINDOW, scripts, version, wallet.outpoints)
