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
  chain, so no other block of it spends it again); the rest are `risky` and are searched for with
  bytes.find, up to MAX_FIND of them. More, or no spenttxouts: the block is walked.
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


class OutpointBook:
    """What Quill learned of the outpoints the wallets look for, from the blocks it walked.

    `covered`: outpoint -> the watched script its output pays (a spend shows that script in the
    node's spenttxouts). `settled`: outpoint -> the block that spends it; it counts only once that
    block is in the active chain (`confirm`), and not for that block itself. A reorganization
    (`forget_settled`) drops them all. `risky(outpoints, scripts, block)`: the outpoints looked for
    that neither covers, as a list, or None when there are more than MAX_FIND.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.covered: dict[bytes, bytes] = {}
        self.covered_scripts: set[bytes] = set()
        self.settled: dict[bytes, bytes] = {}           # outpoint -> block hash, in the active chain
        self.pending: dict[bytes, list[bytes]] = {}     # block hash -> outpoints it spends (not yet active)
        self.spent_in: dict[bytes, list[bytes]] = {}    # block hash -> its settled outpoints
        self._cache: tuple[Any, list[bytes]] | None = None

    def learn(self, block_hash: bytes, txs: Iterable[Any], scripts: Any) -> None:
        """The transactions walked in block `block_hash`: their outputs paying `scripts`, their inputs."""
        from .scan import outpoint_key
        spent = []
        with self.lock:
            for tx in txs:
                txid = tx.txid()
                for n, out in enumerate(tx.vout):
                    if out.script_pubkey in scripts:
                        self.covered[outpoint_key(txid, n)] = out.script_pubkey
                        self.covered_scripts.add(out.script_pubkey)
                if not tx.is_coinbase():
                    spent += [outpoint_key(i.prevout.hash, i.prevout.n) for i in tx.vin]
            if spent:
                self.pending.setdefault(block_hash, []).extend(spent)
            self._cache = None

    def confirm(self, is_active: Any) -> None:
        """Count the pending blocks' spends for which `is_active(block_hash)` holds (call under the chain's lock)."""
        with self.lock:
            for block_hash in [h for h in self.pending if is_active(h)]:
                keys = self.pending.pop(block_hash)
                for key in keys:
                    self.settled[key] = block_hash
                self.spent_in.setdefault(block_hash, []).extend(keys)
                self._cache = None

    def forget_settled(self) -> None:
        """The active chain lost blocks: what they spent may be spent elsewhere now."""
        with self.lock:
            self.settled.clear()
            self.pending.clear()
            self.spent_in.clear()
            self._cache = None

    def _uncovered(self, sets: list[Any], scripts: Any, with_spent: bool) -> list[bytes]:
        """Up to MAX_FIND + 1 outpoints of `sets` neither covered nor settled. Set operations run in C,
        in one call each (a wallet may be adding to its set meanwhile); a covered outpoint counts only
        while the script it pays is still watched (which is looked up one by one only where some
        covered script is not: another wallet's, or an unloaded one's)."""
        exempt: list[Any] = [self.settled]
        if with_spent:
            exempt.append(self.covered)
        every = with_spent and not self.covered_scripts.issubset(scripts)
        out: list[bytes] = []
        for s in sets:
            out.extend(islice(s.difference(*exempt), MAX_FIND + 1 - len(out)))
            if every and len(out) <= MAX_FIND:
                covered = self.covered
                mine = s.intersection(covered)
                out.extend(k for k in mine if covered[k] not in scripts and k not in self.settled)
            if len(out) > MAX_FIND:
                break
        return out

    def risky(self, outpoints: Any, scripts: Any, version: Any, block_hash: bytes,
              with_spent: bool) -> list[bytes] | None:
        """The outpoints among `outpoints` a spend of which in block `block_hash` would go unseen by the
        script searches: neither covered by a script in `scripts` (when the block's spent outputs are
        searched too, `with_spent`) nor settled in another block. `version` changes with `scripts`."""
        sets = outpoints.sets if hasattr(outpoints, "sets") else [outpoints]
        with self.lock:
            key = (tuple((id(s), len(s)) for s in sets), version, len(scripts), with_spent)
            if self._cache is None or self._cache[0] != key:
                self._cache = (key, self._uncovered(sets, scripts, with_spent))
            found = self._cache[1]
            if len(found) > MAX_FIND:
                return None
            extra = [k for k in self.spent_in.get(block_hash, ()) if k in outpoints]
        if len(found) + len(extra) > MAX_FIND:
            return None
        return found + extra
