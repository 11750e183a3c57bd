"""Chain tips and network hash rate over the block index (Core's getchaintips and
GetNetworkHashPS, rpc/blockchain.cpp and rpc/mining.cpp)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .index import FAILED_MASK, VALID_CONNECTED, VALID_DATA, BlockIndex

ACTIVE, INVALID, HEADERS_ONLY, VALID_FORK, VALID_HEADERS = (
    "active", "invalid", "headers-only", "valid-fork", "valid-headers")


@dataclass(frozen=True)
class ChainTip:
    height: int
    hash: bytes
    branchlen: int
    status: str


def _status(index: BlockIndex, entry: Any) -> str:
    if index.contains(entry):
        return ACTIVE
    if entry.status & FAILED_MASK:
        return INVALID
    if not entry.status & (VALID_DATA | VALID_CONNECTED):
        return HEADERS_ONLY  # its block (or a parent's) was never stored
    if entry.status & VALID_CONNECTED:
        return VALID_FORK    # fully validated once, reorganized away since
    return VALID_HEADERS     # stored, never validated: never part of the most-work chain


def chain_tips(index: BlockIndex) -> list[ChainTip]:
    """The active tip and every block off the active chain that no other such block builds on,
    highest first (Core's CompareBlocksByHeight; equal heights in the order they were seen)."""
    orphans = [e for e in index.entries.values() if not index.contains(e)]
    prevs = {id(e.prev) for e in orphans}
    tips = [e for e in orphans if id(e) not in prevs]
    if index.tip is not None:
        tips.append(index.tip)
    tips.sort(key=lambda e: (-e.height, e.seq))
    out = []
    for e in tips:
        fork = index.find_fork(e)
        out.append(ChainTip(e.height, e.hash, e.height - (fork.height if fork is not None else 0), _status(index, e)))
    return out


def network_hash_ps(index: BlockIndex, lookup: int = 120, height: int = -1,
                    retarget_interval: int = 2016) -> float:
    """Core's GetNetworkHashPS: work over time across the last `lookup` blocks."""
    tip = index.tip
    if tip is None:
        return 0.0
    pb = tip
    if 0 <= height < tip.height:
        pb = index.active[height]
    if pb.height == 0:
        return 0.0
    if lookup <= 0:
        lookup = pb.height % retarget_interval + 1
    lookup = min(lookup, pb.height)
    pb0 = pb
    min_time = max_time = pb0.header.time
    for _ in range(lookup):
        pb0 = pb0.prev
        min_time = min(min_time, pb0.header.time)
        max_time = max(max_time, pb0.header.time)
    if min_time == max_time:
        return 0.0
    return _getdouble(pb.chain_work - pb0.chain_work) / (max_time - min_time)


def _getdouble(value: int) -> float:
    """Core's arith_uint256::getdouble: 32-bit limbs summed low to high, rounding as it goes."""
    result, fact = 0.0, 1.0
    for _ in range(8):
        result += fact * (value & 0xFFFFFFFF)
        value >>= 32
        fact *= 4294967296.0
    return result
