"""Telling, at C speed, that a raw block holds nothing for the wallets, before walking it in Python.

Walking a mainnet block's ~3,000 transactions in Python (quill.chain.scan) costs ~4-6 ms, which is
30 minutes over the 300,000 blocks since 2020: too slow where block filters do not help (a wallet
of 100,000 scripts costs the node ~18 ms per block to match). Almost no block concerns a wallet, so
a block is first searched with `re` for the byte strings a relevant transaction must contain, and
walked only when one is there (false alarms are only slower; a missed transaction would be a bug).

A transaction concerns a wallet when it pays one of its scripts or spends one of its outpoints
(scan.scan_block). Each is looked for as follows.

* Paying a script: an output is serialized as value (8 bytes), CompactSize(len(script)), script, so
  a paid script s appears in the block as the bytes ser(s) = CompactSize(len(s)) || s. Scripts are
  grouped by their first PREFIX bytes of ser(s) and its length; per group one `re` search finds
  every place where the prefix is (the pattern consumes the prefix only when it cannot overlap
  itself, else its first byte, so no occurrence is skipped) and captures the bytes that follow,
  which are looked up in the group's set of tails. A wallet's scripts make a few groups (P2WPKH
  `16 00 14`, P2TR `22 51 20`, P2SH `17 a9 14`, ...); above MAX_GROUPS there is no prescan.
* Spending an outpoint whose script the wallet watches: the node's REST `/rest/spenttxouts/<hash>.bin`
  lists the outputs a block spends, serialized as outputs are (value, CompactSize, script), so the
  same search over it finds every spend of a coin paying a watched script.
* Spending any other outpoint the wallets look for (OutpointBook): an outpoint is `covered` when
  Quill saw the transaction creating it pay a watched script (its spends show in spenttxouts),
  `settled` when Quill saw it spent in a block of the active chain (an output is spent once in a
  chain, so no other block of it spends it again), and `unspent at T` when the node's `gettxout`
  found it in its UTXO set at its tip T: no block of the chain ending at T spends it, whatever
  reorganization comes later (TipChains tells whether a block is in that chain; an outpoint spent
  and then created again by a duplicate transaction would break this: BIP34 makes every transaction
  unique from 2013 on, up to height 1,983,702, and mainnet's two earlier duplicate coinbases
  overwrote coins that were never spent). The rest are
  `risky` and are searched for with bytes.find, up to MAX_FIND of them. More, or no spenttxouts:
  the block is walked.

So the spent outputs are needed only for a block that might spend a covered coin neither settled
nor unspent at a tip above the block (an open coin: one spent later on, or a block beyond every tip
asked about), and only when there are more than FIND_COVERED of them (fewer are searched for in the
block). A wallet whose coins are all still unspent at the node's tip, or already seen spent, needs
none; the node is asked once per coin (a JSON-RPC batch), against ~0.7-1.2 ms of its time per block
for the spent outputs.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from itertools import islice
from typing import Any

from quill.tx.serialize import compact_size

PREFIX = 3          # bytes of ser(script) searched for literally
MAX_GROUPS = 8      # more groups of scripts than this: walking the block costs less than the searches
MAX_FIND = 8        # risky outpoints searched for one by one; more: the block is walked
MAX_TIPS = 4        # tips whose UTXO answers are kept (older ones are dropped: their coins are asked again)
# Open coins (see Survey) searched for in the block rather than in its spent outputs, up to this many:
# bytes.find costs Quill ~0.15 ms per coin in a 1.5 MB block, the spent outputs cost the node ~0.7-1.2 ms
# (bench_follow_mainnet), and Quill's own ~1 ms per block sets the pace otherwise.
FIND_COVERED = 3


def serialized(script: bytes) -> bytes:
    """The script as an output or a spent output carries it: CompactSize length, then the bytes."""
    return compact_size(len(script)) + script


def _overlaps_itself(prefix: bytes) -> bool:
    """True when two occurrences of `prefix` can overlap (it has a proper border)."""
    return any(prefix[:k] == prefix[-k:] for k in range(1, len(prefix)))


class ScriptPatterns:
    """One `re` search per group of watched scripts (see the module's docstring)."""

    def __init__(self) -> None:
        self.scripts: frozenset[bytes] = frozenset()
        self.groups: dict[tuple[bytes, int], set[bytes]] = {}
        self.searches: list[tuple[re.Pattern[bytes], set[bytes]]] = []

    def update(self, scripts: Iterable[bytes]) -> None:
        """Watch `scripts` (a set that usually only grows: the new ones are added to their groups)."""
        scripts = scripts if isinstance(scripts, frozenset) else frozenset(scripts)
        if scripts is self.scripts:
            return
        if not self.scripts.issubset(scripts):
            self.groups = {}
            added: Iterable[bytes] = scripts
        else:
            added = scripts - self.scripts
        for script in added:
            ser = serialized(script)
            prefix = ser[:PREFIX]
            self.groups.setdefault((prefix, len(ser) - len(prefix)), set()).add(ser[len(prefix):])
        self.scripts = scripts
        self.searches = []
        if len(self.groups) > MAX_GROUPS:
            return
        for (prefix, rest), tails in self.groups.items():
            consumed = prefix[:1] if _overlaps_itself(prefix) else prefix
            ahead = re.escape(prefix[len(consumed):])
            pattern = re.compile(re.escape(consumed) + b"(?=" + ahead + b"(.{%d}))" % rest, re.S)
            self.searches.append((pattern, tails))

    @property
    def usable(self) -> bool:
        return not self.groups or bool(self.searches)

    def found_in(self, data: bytes) -> bool:
        """True when ser(s) of a watched script s occurs anywhere in `data` (a false alarm is possible,
        a miss is not)."""
        for pattern, tails in self.searches:
            if not tails.isdisjoint(pattern.findall(data)):
                return True
        return False


class Survey:
    """What a block might do to the outpoints looked for (OutpointBook.survey): `unasked`, those the node
    was not asked about yet; `covered`, up to MAX_FIND + 1 open ones (neither settled nor unspent at a
    tip above the block) whose spend shows in the spent outputs; `uncovered`, up to MAX_FIND + 1 open
    ones whose spend does not; `extra`, those settled in this very block."""
    __slots__ = ("unasked", "covered", "uncovered", "extra")

    def __init__(self, unasked: list[bytes], covered: list[bytes], uncovered: list[bytes], extra: list[bytes]) -> None:
        self.unasked = unasked
        self.covered = covered
        self.uncovered = uncovered
        self.extra = extra

    @property
    def needs_spent(self) -> bool:
        """True when the block's spent outputs are to be searched for the spends of open covered coins:
        more of them than FIND_COVERED, or more outpoints in all than MAX_FIND to search the block for."""
        if not self.covered:
            return False
        return (len(self.covered) > FIND_COVERED
                or len(self.uncovered) + len(self.covered) + len(self.extra) > MAX_FIND)

    def risky(self, with_spent: bool) -> list[bytes] | None:
        """The outpoints to search the raw block for (the spent outputs searched too: `with_spent`), or
        None when there are more than MAX_FIND."""
        found = self.uncovered + self.extra if with_spent else self.uncovered + self.covered + self.extra
        return None if len(found) > MAX_FIND else found


class TipChains:
    """Whether a block is in the chain that ends at a tip, from the header index (`lookup`: hash -> entry
    or None). The hashes below each tip are listed once, as far down as asked (a rescan from 2020 walks
    ~600,000 headers once, ~0.1 s); the answer needs no lock: entries never change their parent."""

    def __init__(self, lookup: Any) -> None:
        self.lookup = lookup
        self.lock = threading.Lock()
        self.below: dict[bytes, tuple[int, list[bytes], Any]] = {}   # tip -> (its height, hashes down, lowest entry)

    def holds(self, tip: bytes, entry: Any) -> bool:
        """True when `entry` is `tip`'s block or one of its ancestors (False when the tip is unknown)."""
        with self.lock:
            known = self.below.get(tip)
            if known is None:
                top = self.lookup(tip)
                if top is None:
                    return False
                known = (top.height, [top.hash], top)
            height, hashes, lowest = known
            if entry.height > height:
                return False
            while lowest is not None and lowest.height > entry.height:
                lowest = lowest.prev
                if lowest is not None:
                    hashes.append(lowest.hash)
            self.below[tip] = (height, hashes, lowest)
            return height - entry.height < len(hashes) and hashes[height - entry.height] == entry.hash

    def forget(self, keep: Iterable[bytes]) -> None:
        keep = set(keep)
        with self.lock:
            for tip in [t for t in self.below if t not in keep]:
                del self.below[tip]


class OutpointBook:
    """What Quill learned of the outpoints the wallets look for, from the blocks it walked and from the node.

    `covered`: outpoint -> the watched script its output pays (a spend shows that script in the
    node's spenttxouts). `settled`: outpoint -> the block that spends it; it counts only once that
    block is in the active chain (`confirm`), and not for that block itself. A reorganization
    (`forget_settled`) drops them all. `unspent`: tip -> the outpoints the node's UTXO set held at
    that tip (`record`); they hold for the blocks of the chain ending there, reorganizations or not.
    `survey(outpoints, scripts, version, block, tips)`: what a block might spend (Survey).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.covered: dict[bytes, bytes] = {}
        self.covered_scripts: set[bytes] = set()
        self.settled: dict[bytes, bytes] = {}           # outpoint -> block hash, in the active chain
        self.pending: dict[bytes, list[bytes]] = {}     # block hash -> outpoints it spends (not yet active)
        self.pending_keys: set[bytes] = set()           # those outpoints
        self.spent_in: dict[bytes, list[bytes]] = {}    # block hash -> its settled outpoints
        self.unspent: dict[bytes, set[bytes]] = {}      # tip hash -> outpoints unspent there, oldest tip first
        self.asked: set[bytes] = set()                  # outpoints the node was asked about
        self._cache: dict[Any, tuple[list[bytes], list[bytes], list[bytes]]] = {}

    def learn(self, block_hash: bytes, txs: Iterable[Any], scripts: Any) -> list[bytes]:
        """The transactions walked in block `block_hash`: their outputs paying `scripts`, their inputs.
        Returns the outpoints of those outputs that the node was not asked about yet."""
        from .scan import outpoint_key
        spent = []
        new = []
        with self.lock:
            for tx in txs:
                txid = tx.txid()
                for n, out in enumerate(tx.vout):
                    if out.script_pubkey in scripts:
                        key = outpoint_key(txid, n)
                        self.covered[key] = out.script_pubkey
                        self.covered_scripts.add(out.script_pubkey)
                        if key not in self.asked:
                            new.append(key)
                if not tx.is_coinbase():
                    spent += [outpoint_key(i.prevout.hash, i.prevout.n) for i in tx.vin]
            if spent:
                self.pending.setdefault(block_hash, []).extend(spent)
                self.pending_keys.update(spent)
            self._cache.clear()
        return new

    def record(self, answers: dict[bytes, bytes | None]) -> None:
        """The node's answers: outpoint -> the tip at which its UTXO set held it, or None (spent there, or
        never created). Only the last MAX_TIPS tips are kept; the coins of older ones are asked again."""
        with self.lock:
            for key, tip in answers.items():
                self.asked.add(key)
                if tip is not None:
                    self.unspent.setdefault(tip, set()).add(key)
            while len(self.unspent) > MAX_TIPS:
                self.asked -= self.unspent.pop(next(iter(self.unspent)))
            self._cache.clear()

    def tips(self) -> list[bytes]:
        with self.lock:
            return list(self.unspent)

    def confirm(self, is_active: Any) -> None:
        """Count the pending blocks' spends for which `is_active(block_hash)` holds (call under the chain's lock)."""
        with self.lock:
            for block_hash in [h for h in self.pending if is_active(h)]:
                keys = self.pending.pop(block_hash)
                for key in keys:
                    self.settled[key] = block_hash
                self.pending_keys.difference_update(keys)
                self.spent_in.setdefault(block_hash, []).extend(keys)
                self._cache.clear()

    def forget_settled(self) -> None:
        """The active chain lost blocks: what they spent may be spent elsewhere now."""
        with self.lock:
            self.settled.clear()
            self.pending.clear()
            self.pending_keys.clear()
            self.spent_in.clear()
            self._cache.clear()

    def _open(self, sets: list[Any], scripts: Any, tips: tuple[bytes, ...],
              guess: bool) -> tuple[list[bytes], list[bytes], list[bytes]]:
        """(unasked, covered, uncovered) of Survey over `sets`. Set operations run in C, in one call each
        (a wallet may be adding to its set meanwhile): the difference with what is settled or unspent at
        `tips` is usually empty or small; a covered outpoint counts only while the script it pays is
        still watched (another wallet's, or an unloaded one's, is not). `guess`: the pending spends
        count as settled (their block is about to be connected)."""
        exempt: list[Any] = [self.settled] + [self.unspent[t] for t in tips] + ([self.pending_keys] if guess else [])
        covered_map = self.covered
        every = not self.covered_scripts.issubset(scripts)
        unasked: list[bytes] = []
        covered: list[bytes] = []
        uncovered: list[bytes] = []
        for s in sets:
            left = s.difference(*exempt)
            if not left:
                continue
            unasked.extend(left.difference(self.asked))
            mine = left.intersection(covered_map)
            if every:
                mine = {k for k in mine if covered_map[k] in scripts}
            covered.extend(islice(mine, MAX_FIND + 1 - len(covered)))
            uncovered.extend(islice(left.difference(mine), MAX_FIND + 1 - len(uncovered)))
        return unasked, covered, uncovered

    def survey(self, outpoints: Any, scripts: Any, version: Any, block_hash: bytes,
               tips: tuple[bytes, ...] = (), guess: bool = False) -> Survey:
        """What block `block_hash` might do to `outpoints` (a set, or AnyOf several): Survey. `tips`: the
        tips of `unspent` whose chain holds the block. `version` changes with `scripts`. `guess`: for a
        decision ahead of time (whether to fetch the spent outputs), pending spends count as settled."""
        sets = outpoints.sets if hasattr(outpoints, "sets") else [outpoints]
        with self.lock:
            key = (tuple((id(s), len(s)) for s in sets), version, len(scripts), tips, guess)
            found = self._cache.get(key)
            if found is None:
                if len(self._cache) >= 4:
                    self._cache.clear()
                found = self._cache[key] = self._open(sets, scripts, tips, guess)
            unasked, covered, uncovered = found
            extra = [k for k in self.spent_in.get(block_hash, ()) if k in outpoints]
        return Survey(unasked, covered, uncovered, extra)

    def risky(self, outpoints: Any, scripts: Any, version: Any, block_hash: bytes,
              with_spent: bool, tips: tuple[bytes, ...] = ()) -> list[bytes] | None:
        """The outpoints among `outpoints` a spend of which in block `block_hash` would go unseen by the
        script searches (Survey.risky), or None when there are more than MAX_FIND."""
        return self.survey(outpoints, scripts, version, block_hash, tips).risky(with_spent)
