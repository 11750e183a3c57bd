"""The fee estimator's saved state (Core's fee_estimates.dat), as Quill's own JSON file.

    <chain datadir>/fee_estimates.json

It holds what Core's file holds (CBlockPolicyEstimator::Write): the format version, the best
height seen, the block range the data covers, the bucket bounds and each horizon's decayed
averages; doubles are written exactly (JSON's shortest round-trip form). As Core:
- it is written at shutdown (after the transactions still in the mempool are counted as
  having left it unconfirmed) and every hour (FEE_FLUSH_INTERVAL), whole or not at all;
- at start it is read unless older than MAX_FILE_AGE (60 hours, by its modification time),
  which -acceptstalefeeestimates overrides; a damaged or incompatible file is ignored with a
  warning, and the estimator starts empty.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from typing import Any

from quill.atomic_store import StoreWriteFailed, write_file_atomically

from .fee_estimator import (
    LONG,
    LONG_BLOCK_PERIODS,
    LONG_DECAY,
    LONG_SCALE,
    MED_BLOCK_PERIODS,
    MED_DECAY,
    MED_SCALE,
    MEDIUM,
    SHORT,
    SHORT_BLOCK_PERIODS,
    SHORT_DECAY,
    SHORT_SCALE,
    BlockPolicyEstimator,
    TxConfirmStats,
)

_log = logging.getLogger("quill.chain")

FILE_NAME = "fee_estimates.json"
# Core's CURRENT_FEES_FILE_VERSION: the version written, and the one required to read.
CURRENT_FEES_FILE_VERSION = 149900
FEE_FLUSH_INTERVAL = 60 * 60            # seconds
MAX_FILE_AGE_HOURS = 60
DEFAULT_ACCEPT_STALE_FEE_ESTIMATES = False
# Core writes the medium horizon first, then the short and the long one.
_FILE_ORDER = ((MEDIUM, MED_BLOCK_PERIODS, MED_DECAY, MED_SCALE),
               (SHORT, SHORT_BLOCK_PERIODS, SHORT_DECAY, SHORT_SCALE),
               (LONG, LONG_BLOCK_PERIODS, LONG_DECAY, LONG_SCALE))


class CorruptEstimates(ValueError):
    """The file cannot be used; the message is Core's."""


def path_in(chain_datadir: str) -> str:
    return os.path.join(chain_datadir, FILE_NAME)


# -- writing ---------------------------------------------------------------------------


def _stats_to_json(stats: TxConfirmStats) -> dict[str, Any]:
    return {"decay": stats.decay, "scale": stats.scale, "feerate_avg": stats.feerate_avg,
            "tx_ct_avg": stats.tx_ct_avg, "conf_avg": stats.conf_avg, "fail_avg": stats.fail_avg}


def to_json(estimator: BlockPolicyEstimator) -> dict[str, Any]:
    """Core's CBlockPolicyEstimator::Write: the recorded span is this run's when it is more than
    half the historical one, the historical one otherwise."""
    with estimator.lock:
        if estimator.block_span() > estimator.historical_block_span() // 2:
            first, best = estimator.first_recorded_height, estimator.best_seen_height
        else:
            first, best = estimator.historical_first, estimator.historical_best
        return {"version": CURRENT_FEES_FILE_VERSION, "best_seen_height": estimator.best_seen_height,
                "historical_first": first, "historical_best": best, "buckets": estimator.buckets,
                **{name: _stats_to_json(estimator.stats[name]) for name, *_ in _FILE_ORDER}}


def write(estimator: BlockPolicyEstimator, path: str) -> bool:
    """Core's FlushFeeEstimates; a failure is a warning and changes nothing else."""
    try:
        write_file_atomically(path, json.dumps(to_json(estimator), separators=(",", ":")))
    except (OSError, StoreWriteFailed) as e:
        _log.warning("Failed to write fee estimates to %s. Continue anyway. (%s)", path, e)
        return False
    _log.info("Flushed fee estimates to %s.", os.path.basename(path))
    return True


def flush(estimator: BlockPolicyEstimator, path: str) -> bool:
    """Core's Flush at shutdown: the still unconfirmed transactions, then the file."""
    estimator.flush_unconfirmed()
    return write(estimator, path)


# -- reading ---------------------------------------------------------------------------


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CorruptEstimates("Corrupt estimates file. Not a number")
    return float(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise CorruptEstimates("Corrupt estimates file. Not an unsigned integer")
    return value


def _vector(value: Any, size: int, message: str) -> list[float]:
    if not isinstance(value, list):
        raise CorruptEstimates(message)
    numbers = [_number(v) for v in value]
    if len(numbers) != size:
        raise CorruptEstimates(message)
    return numbers


def _stats_from_json(data: Any, buckets: list[float], periods: int, decay: float, scale: int) -> TxConfirmStats:
    """Core's TxConfirmStats::Read, with its sanity checks and messages."""
    if not isinstance(data, dict):
        raise CorruptEstimates("Corrupt estimates file. Missing horizon")
    stats = TxConfirmStats(buckets, periods, decay, scale)
    n = len(buckets)
    stats.decay = _number(data.get("decay"))
    if not 0 < stats.decay < 1:
        raise CorruptEstimates("Corrupt estimates file. Decay must be between 0 and 1 (non-inclusive)")
    stats.scale = _count(data.get("scale"))
    if stats.scale == 0:
        raise CorruptEstimates("Corrupt estimates file. Scale must be non-zero")
    stats.feerate_avg = _vector(data.get("feerate_avg"), n,
                                "Corrupt estimates file. Mismatch in feerate average bucket count")
    stats.tx_ct_avg = _vector(data.get("tx_ct_avg"), n, "Corrupt estimates file. Mismatch in tx count bucket count")
    conf = data.get("conf_avg")
    if not isinstance(conf, list):
        raise CorruptEstimates("Corrupt estimates file. Mismatch in feerate conf average bucket count")
    max_confirms = stats.scale * len(conf)
    if max_confirms <= 0 or max_confirms > 6 * 24 * 7:
        raise CorruptEstimates("Corrupt estimates file.  Must maintain estimates for between 1 and 1008 (one week) "
                               "confirms")
    stats.conf_avg = [_vector(row, n, "Corrupt estimates file. Mismatch in feerate conf average bucket count")
                      for row in conf]
    fail = data.get("fail_avg")
    if not isinstance(fail, list) or len(fail) != len(conf):
        raise CorruptEstimates("Corrupt estimates file. Mismatch in confirms tracked for failures")
    stats.fail_avg = [_vector(row, n, "Corrupt estimates file. Mismatch in one of failure average bucket counts")
                      for row in fail]
    stats.resize_in_memory_counters(n)
    return stats


def from_json(estimator: BlockPolicyEstimator, data: Any) -> None:
    """Core's CBlockPolicyEstimator::Read: everything is checked before anything is replaced."""
    if not isinstance(data, dict):
        raise CorruptEstimates("Corrupt estimates file. Not an object")
    version = _count(data.get("version"))
    if version > CURRENT_FEES_FILE_VERSION:
        raise CorruptEstimates(f"File version ({version}) too high to be read.")
    best_seen = _count(data.get("best_seen_height"))
    if version < CURRENT_FEES_FILE_VERSION:
        _log.warning("Incompatible old fee estimation data (non-fatal). Version: %d", version)
        return
    first, best = _count(data.get("historical_first")), _count(data.get("historical_best"))
    if first > best or best > best_seen:
        raise CorruptEstimates("Corrupt estimates file. Historical block range for estimates is invalid")
    raw_buckets = data.get("buckets")
    if not isinstance(raw_buckets, list) or not 1 < len(raw_buckets) <= 1000:
        raise CorruptEstimates("Corrupt estimates file. Must have between 2 and 1000 feerate buckets")
    buckets = [_number(b) for b in raw_buckets]
    stats = {name: _stats_from_json(data.get(name), buckets, periods, decay, scale)
             for name, periods, decay, scale in _FILE_ORDER}
    with estimator.lock:
        estimator.buckets = buckets
        estimator.stats = stats
        estimator.best_seen_height = best_seen
        estimator.historical_first = first
        estimator.historical_best = best


def file_age_hours(path: str, now: float) -> int:
    """Core's GetFeeEstimatorFileAge: whole hours since the file was last written."""
    return int((now - os.path.getmtime(path)) // 3600)


def load(estimator: BlockPolicyEstimator, path: str, accept_stale: bool = DEFAULT_ACCEPT_STALE_FEE_ESTIMATES,
         now: float | None = None) -> bool:
    """What CBlockPolicyEstimator's constructor does with the file; True when its data was taken."""
    if not os.path.exists(path):
        _log.info("%s is not found. Continue anyway.", path)
        return False
    age = file_age_hours(path, time.time() if now is None else now)
    if age > MAX_FILE_AGE_HOURS and not accept_stale:
        _log.warning("Fee estimation file %s too old (age=%d > %d hours) and will not be used to avoid serving "
                     "stale estimates.", path, age, MAX_FILE_AGE_HOURS)
        return False
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        from_json(estimator, data)
    except (OSError, ValueError) as e:      # CorruptEstimates and json's errors are ValueErrors
        _log.warning("Unable to read policy estimator data (non-fatal): %s", e)
        _log.warning("Failed to read fee estimates from %s. Continue anyway.", path)
        return False
    return True


class PeriodicFlush:
    """Core's scheduler task: the file written every FEE_FLUSH_INTERVAL while the node runs."""

    def __init__(self, estimator: BlockPolicyEstimator, path: str, interval: float = FEE_FLUSH_INTERVAL) -> None:
        self.estimator = estimator
        self.path = path
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="quill-feeest-flush", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            write(self.estimator, self.path)
