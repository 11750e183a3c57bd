"""The block index: every block Quill has seen, the active chain, and which tip has the most work.

Entries live in memory (loaded from the store at start); stale branches stay
known. Status follows Core's BlockStatus in spirit: a block is VALID_DATA
once stored, VALID_CONNECTED once it has been connected, and FAILED (itself
invalid or invalidated) or FAILED_CHILD (descends from a FAILED block).
"""
from .pow import block_proof

VALID_DATA = 1
VALID_CONNECTED = 2
FAILED = 4
FAILED_CHILD = 8
FAILED_MASK = FAILED | FAILED_CHILD


class BlockEntry:
    __slots__ = ("hash", "prev", "height", "header", "n_tx", "status", "seq", "chain_work")

    def __init__(self, hash_, prev, height, header, n_tx, status, seq):
        self.hash = hash_
        self.prev = prev
        self.height = height
        self.header = header
        self.n_tx = n_tx
        self.status = status
        self.seq = seq
        self.chain_work = (prev.chain_work if prev is not None else 0) + block_proof(header.bits)

    @property
    def failed(self) -> bool:
        return bool(self.status & FAILED_MASK)

    def ancestor(self, height: int):
        entry = self
        while entry is not None and entry.height > height:
            entry = entry.prev
        return entry

    def __repr__(self):
        return f"BlockEntry({self.hash[::-1].hex()[:16]}.., height={self.height}, status={self.status})"


class BlockIndex:
    def __init__(self):
        self.clear()

    def clear(self) -> None:
        self.entries: dict = {}
        self.active: list = []          # active[h] is the entry at height h
        self.next_seq = 0

    def __contains__(self, hash_) -> bool:
        return hash_ in self.entries

    def get(self, hash_):
        return self.entries.get(hash_)

    def add(self, hash_, prev, header, n_tx, status, seq=None) -> BlockEntry:
        if seq is None:
            seq = self.next_seq
        self.next_seq = max(self.next_seq, seq + 1)
        entry = BlockEntry(hash_, prev, 0 if prev is None else prev.height + 1, header, n_tx, status, seq)
        self.entries[hash_] = entry
        return entry

    # -- active chain -------------------------------------------------------------

    @property
    def tip(self):
        return self.active[-1] if self.active else None

    def set_tip(self, entry) -> None:
        """Make `entry` the active tip, rewriting the active list from the fork point only."""
        chain = self.active
        del chain[entry.height + 1:]
        fill = []
        e = entry
        while e is not None and (e.height >= len(chain) or chain[e.height] is not e):
            fill.append(e)
            e = e.prev
        for e in reversed(fill):
            if e.height < len(chain):
                chain[e.height] = e
            else:
                chain.append(e)

    def contains(self, entry) -> bool:
        return entry.height < len(self.active) and self.active[entry.height] is entry

    def find_fork(self, entry):
        """The last entry of the active chain that `entry` descends from (Core's CChain::FindFork)."""
        if entry.height >= len(self.active):
            entry = entry.ancestor(len(self.active) - 1)
        while entry is not None and not self.contains(entry):
            entry = entry.prev
        return entry

    def next_in_active(self, entry):
        if self.contains(entry) and entry.height + 1 < len(self.active):
            return self.active[entry.height + 1]
        return None

    # -- chain selection ----------------------------------------------------------

    def best_candidate(self):
        """The valid entry with the most work; first seen wins a tie (Core's CBlockIndexWorkComparator)."""
        best = None
        for e in self.entries.values():
            if e.failed:
                continue
            if best is None or e.chain_work > best.chain_work or (
                    e.chain_work == best.chain_work and e.seq < best.seq):
                best = e
        return best

    def descendants(self, entry):
        return [e for e in self.entries.values() if e is not entry and e.height > entry.height
                and e.ancestor(entry.height) is entry]
