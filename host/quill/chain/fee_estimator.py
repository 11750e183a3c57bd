"""Bitcoin Core's block policy fee estimator (CBlockPolicyEstimator, policy/fees/block_policy_estimator.cpp).

Transactions entering the mempool are put in fee-rate buckets (100 sat/kvB to 1e7, 5% apart);
when a block confirms them, the number of blocks they waited is recorded in three histories
with different decays (short, medium, long: TxConfirmStats). An estimate for a target is the
lowest bucket range whose transactions confirmed within the target often enough.

Everything is computed in the same doubles, in the same order, as Core's C++, so the answers
are Core's to the last bit on the same history. Where Core relies on unsigned 32-bit arithmetic
wrapping (heights below the horizon's length), the wrap is reproduced (`_u32`).

The estimator is fed by the chain (quill.chain.service subscribes it to the built-in chain's
events, as Core registers it as a validation interface):
    process_transaction(info)              a transaction entered the mempool
    remove_tx(txid)                        it left the mempool otherwise than in a block
    process_block(removed, height)         a block connected: the mempool entries it confirmed
It is not thread-safe on its own terms: every method takes its lock (Core's m_cs_fee_estimator).
Persistence (Core's fee_estimates.dat) is quill.chain.fee_estimates_file.
"""
from __future__ import annotations

import bisect
import logging
import math
import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .mempool import REASON_BLOCK

_log = logging.getLogger("quill.chain")

# Horizons: periods tracked, blocks per period, decay per block (Core's constants).
SHORT_BLOCK_PERIODS, SHORT_SCALE, SHORT_DECAY = 12, 1, .962      # half-life 18 blocks
MED_BLOCK_PERIODS, MED_SCALE, MED_DECAY = 24, 2, .9952           # half-life 144 blocks
LONG_BLOCK_PERIODS, LONG_SCALE, LONG_DECAY = 42, 24, .99931      # half-life 1008 blocks
OLDEST_ESTIMATE_HISTORY = 6 * 1008

HALF_SUCCESS_PCT = .6
SUCCESS_PCT = .85
DOUBLE_SUCCESS_PCT = .95
SUFFICIENT_FEETXS = 0.1
SUFFICIENT_TXS_SHORT = 0.5

MIN_BUCKET_FEERATE = 100.0
MAX_BUCKET_FEERATE = 1e7
FEE_SPACING = 1.05
INF_FEERATE = 1e99

SHORT, MEDIUM, LONG = "short", "medium", "long"
HORIZONS = (SHORT, MEDIUM, LONG)            # Core's ALL_FEE_ESTIMATE_HORIZONS order


def _u32(x: int) -> int:
    """An unsigned int result, as C++ computes it (subtraction wraps modulo 2^32)."""
    return x & 0xFFFFFFFF


def fee_per_k(fee: int, vsize: int) -> int:
    """Core's CFeeRate(fee, vsize).GetFeePerK(): sat per 1000 vbytes, rounded down."""
    return fee * 1000 // vsize if vsize > 0 else 0


def c_round(x: float) -> float:
    """C's round(): to the nearest integer, halves away from zero, as a double (exact: a double
    minus its floor loses nothing, and from 2^52 on every double is an integer)."""
    if x < 0:
        return -c_round(-x)
    if x >= 2.0 ** 52:
        return x
    floor = float(math.floor(x))
    return floor + 1 if x - floor >= 0.5 else floor


def llround(x: float) -> int:
    """C's llround: to the nearest integer, halves away from zero."""
    return int(c_round(x))


def default_buckets() -> list[float]:
    """The upper bounds of the fee-rate buckets, built by repeated multiplication as Core builds them."""
    buckets = []
    boundary = MIN_BUCKET_FEERATE
    while boundary <= MAX_BUCKET_FEERATE:
        buckets.append(boundary)
        boundary *= FEE_SPACING
    buckets.append(INF_FEERATE)
    return buckets


class NewMempoolTransactionInfo(NamedTuple):
    """What the mempool tells the estimator of a transaction it accepted (Core's struct of that name)."""
    txid: bytes
    fee: int                        # base fee, sat
    vsize: int
    height: int                     # the chain's height when it entered
    mempool_limit_bypassed: bool    # re-added from a disconnected block
    submitted_in_package: bool
    chainstate_is_current: bool
    has_no_mempool_parents: bool


class RemovedMempoolTransactionInfo(NamedTuple):
    """A mempool entry a connected block confirmed (Core's struct of that name)."""
    txid: bytes
    fee: int
    vsize: int
    height: int                     # the chain's height when it entered the mempool


@dataclass
class EstimatorBucket:
    start: float = -1
    end: float = -1
    within_target: float = 0
    total_confirmed: float = 0
    in_mempool: float = 0
    left_mempool: float = 0


@dataclass
class EstimationResult:
    passed: EstimatorBucket = field(default_factory=EstimatorBucket)
    failed: EstimatorBucket = field(default_factory=EstimatorBucket)
    decay: float = 0
    scale: int = 0


class TxConfirmStats:
    """One horizon's history (Core's TxConfirmStats): per bucket, decayed counts of transactions
    confirmed within each number of periods, failed, and in all; the mempool's unconfirmed ones."""

    def __init__(self, buckets: list[float], max_periods: int, decay: float, scale: int) -> None:
        if scale == 0:
            raise ValueError("scale must be non-zero")
        self.buckets = buckets
        self.decay = decay
        self.scale = scale
        n = len(buckets)
        self.conf_avg = [[0.0] * n for _ in range(max_periods)]     # [period][bucket]
        self.fail_avg = [[0.0] * n for _ in range(max_periods)]
        self.tx_ct_avg = [0.0] * n
        self.feerate_avg = [0.0] * n
        self.unconf_txs: list[list[int]] = []                       # [entry height % bins][bucket]
        self.old_unconf_txs: list[int] = []
        self.resize_in_memory_counters(n)

    def resize_in_memory_counters(self, n: int) -> None:
        self.unconf_txs = [[0] * n for _ in range(self.max_confirms())]
        self.old_unconf_txs = [0] * n

    def max_confirms(self) -> int:
        return self.scale * len(self.conf_avg)

    def bucket_index(self, feerate: float) -> int:
        """Core's bucketMap.lower_bound: the first bucket whose upper bound is >= feerate."""
        return bisect.bisect_left(self.buckets, feerate)

    def clear_current(self, height: int) -> None:
        """Roll the circular buffer of unconfirmed transactions."""
        row = self.unconf_txs[height % len(self.unconf_txs)]
        for j in range(len(self.buckets)):
            self.old_unconf_txs[j] += row[j]
            row[j] = 0

    def record(self, blocks_to_confirm: int, feerate: float) -> None:
        if blocks_to_confirm < 1:
            return
        periods_to_confirm = (blocks_to_confirm + self.scale - 1) // self.scale
        bucket = self.bucket_index(feerate)
        for i in range(periods_to_confirm, len(self.conf_avg) + 1):
            self.conf_avg[i - 1][bucket] += 1
        self.tx_ct_avg[bucket] += 1
        self.feerate_avg[bucket] += feerate

    def update_moving_averages(self) -> None:
        decay = self.decay
        for row in self.conf_avg:
            row[:] = [v * decay for v in row]
        for row in self.fail_avg:
            row[:] = [v * decay for v in row]
        self.feerate_avg = [v * decay for v in self.feerate_avg]
        self.tx_ct_avg = [v * decay for v in self.tx_ct_avg]

    def new_tx(self, height: int, feerate: float) -> int:
        bucket = self.bucket_index(feerate)
        self.unconf_txs[height % len(self.unconf_txs)][bucket] += 1
        return bucket

    def remove_tx(self, entry_height: int, best_seen_height: int, bucket: int, in_block: bool) -> None:
        blocks_ago = best_seen_height - entry_height if best_seen_height else 0
        if blocks_ago < 0:
            _log.debug("Blockpolicy error, blocks ago is negative for mempool tx")
            return
        if blocks_ago >= len(self.unconf_txs):
            if self.old_unconf_txs[bucket] > 0:
                self.old_unconf_txs[bucket] -= 1
            else:
                _log.debug("Blockpolicy error, mempool tx removed from >25 blocks,bucketIndex=%u already", bucket)
        else:
            row = self.unconf_txs[entry_height % len(self.unconf_txs)]
            if row[bucket] > 0:
                row[bucket] -= 1
            else:
                _log.debug("Blockpolicy error, mempool tx removed from blockIndex=%u,bucketIndex=%u already",
                           entry_height % len(self.unconf_txs), bucket)
        if not in_block and blocks_ago >= self.scale:   # a failure only once unconfirmed for a whole period
            periods_ago = blocks_ago // self.scale
            for i in range(min(periods_ago, len(self.fail_avg))):
                self.fail_avg[i][bucket] += 1

    def estimate_median_val(self, conf_target: int, sufficient_tx_val: float, success_break_point: float,
                            block_height: int, result: EstimationResult | None = None) -> float:
        """The average fee rate of the cheapest bucket range whose transactions confirmed within
        `conf_target` at least `success_break_point` of the time; -1 when there is none.
        Buckets are grouped from the highest down until each group holds enough transactions."""
        n_conf = 0.0            # confirmed within the target
        total_num = 0.0         # confirmed at all
        extra_num = 0           # still in the mempool for the target or longer
        fail_num = 0.0          # left the mempool unconfirmed after the target
        period_target = (conf_target + self.scale - 1) // self.scale
        max_bucket = len(self.buckets) - 1
        cur_near = best_near = cur_far = best_far = max_bucket
        partial_num = 0.0
        found_answer = False
        bins = len(self.unconf_txs)
        max_confirms = self.max_confirms()
        new_bucket_range = True
        passing = True
        pass_bucket = EstimatorBucket()
        fail_bucket = EstimatorBucket()
        conf_row = self.conf_avg[period_target - 1]
        fail_row = self.fail_avg[period_target - 1]
        threshold = sufficient_tx_val / (1 - self.decay)
        # Core adds, per bucket, the unconfirmed counts of the rows for confct in
        # [conf_target, max_confirms): the same rows for every bucket (integers: any order).
        waiting = [row for row in (self.unconf_txs[_u32(block_height - confct) % bins]
                                   for confct in range(conf_target, max_confirms)) if any(row)]
        still_unconfirmed = ([sum(column) for column in zip(*waiting, strict=True)] if waiting
                             else [0] * len(self.buckets))
        for bucket in range(max_bucket, -1, -1):
            if new_bucket_range:
                cur_near = bucket
                new_bucket_range = False
            cur_far = bucket
            n_conf += conf_row[bucket]
            partial_num += self.tx_ct_avg[bucket]
            total_num += self.tx_ct_avg[bucket]
            fail_num += fail_row[bucket]
            extra_num += still_unconfirmed[bucket]
            extra_num += self.old_unconf_txs[bucket]
            # Only the confirmed counts decide when a range is big enough, so that every target
            # looks at the same ranges.
            if partial_num < threshold:
                continue
            partial_num = 0
            cur_pct = n_conf / (total_num + fail_num + extra_num)
            if cur_pct < success_break_point:
                if passing:
                    low, high = min(cur_near, cur_far), max(cur_near, cur_far)
                    fail_bucket = EstimatorBucket(self.buckets[low - 1] if low else 0, self.buckets[high],
                                                  n_conf, total_num, extra_num, fail_num)
                    passing = False
                continue
            fail_bucket = EstimatorBucket()
            found_answer = True
            passing = True
            pass_bucket.within_target = n_conf
            pass_bucket.total_confirmed = total_num
            pass_bucket.in_mempool = extra_num
            pass_bucket.left_mempool = fail_num
            n_conf = total_num = fail_num = 0.0
            extra_num = 0
            best_near, best_far = cur_near, cur_far
            new_bucket_range = True

        median = -1.0
        low, high = min(best_near, best_far), max(best_near, best_far)
        tx_sum = 0.0
        for j in range(low, high + 1):
            tx_sum += self.tx_ct_avg[j]
        if found_answer and tx_sum != 0:
            # The bucket holding the median transaction reports its average fee rate.
            tx_sum = tx_sum / 2
            for j in range(low, high + 1):
                if self.tx_ct_avg[j] < tx_sum:
                    tx_sum -= self.tx_ct_avg[j]
                else:
                    median = self.feerate_avg[j] / self.tx_ct_avg[j]
                    break
            pass_bucket.start = self.buckets[low - 1] if low else 0
            pass_bucket.end = self.buckets[high]
        # Passing until the last few buckets, which had too little data: those count as failed.
        if passing and not new_bucket_range:
            low, high = min(cur_near, cur_far), max(cur_near, cur_far)
            fail_bucket = EstimatorBucket(self.buckets[low - 1] if low else 0, self.buckets[high],
                                          n_conf, total_num, extra_num, fail_num)
        if result is not None:
            result.passed = pass_bucket
            result.failed = fail_bucket
            result.decay = self.decay
            result.scale = self.scale
        return median


class _Tracked(NamedTuple):
    height: int
    bucket: int


class BlockPolicyEstimator:
    """Core's CBlockPolicyEstimator, without the file (fee_estimates_file reads and writes it)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.best_seen_height = 0
        self.first_recorded_height = 0
        self.historical_first = 0
        self.historical_best = 0
        self.tracked: dict[bytes, _Tracked] = {}       # Core's mapMemPoolTxs
        self.tracked_txs = 0
        self.untracked_txs = 0
        self.buckets = default_buckets()
        self.stats = self._new_stats(self.buckets)

    @staticmethod
    def _new_stats(buckets: list[float]) -> dict[str, TxConfirmStats]:
        return {MEDIUM: TxConfirmStats(buckets, MED_BLOCK_PERIODS, MED_DECAY, MED_SCALE),
                SHORT: TxConfirmStats(buckets, SHORT_BLOCK_PERIODS, SHORT_DECAY, SHORT_SCALE),
                LONG: TxConfirmStats(buckets, LONG_BLOCK_PERIODS, LONG_DECAY, LONG_SCALE)}

    # -- the chain's events (quill.chain.service listeners; Core's CValidationInterface) ------

    def mempool_entry_added(self, info: NewMempoolTransactionInfo) -> None:
        self.process_transaction(info)

    def transaction_removed_from_mempool(self, tx: Any, reason: str) -> None:
        # A block's own removals come with mempool_removed_for_block instead (Core signals them apart).
        if reason != REASON_BLOCK:
            self.remove_tx(tx.txid())

    def mempool_removed_for_block(self, removed: list[RemovedMempoolTransactionInfo], height: int) -> None:
        self.process_block(removed, height)

    # -- fed by the mempool and the chain ---------------------------------------------

    def process_transaction(self, info: NewMempoolTransactionInfo) -> None:
        with self.lock:
            if info.txid in self.tracked:
                _log.debug("Blockpolicy error mempool tx %s already being tracked", info.txid[::-1].hex())
                return
            if info.height != self.best_seen_height:
                # Side chains and reorgs are ignored, and so is a transaction that arrives while
                # the estimator has not yet seen the tip's block.
                return
            if (info.mempool_limit_bypassed or info.submitted_in_package or not info.chainstate_is_current
                    or not info.has_no_mempool_parents):
                self.untracked_txs += 1
                return
            self.tracked_txs += 1
            feerate = float(fee_per_k(info.fee, info.vsize))
            bucket = self.stats[MEDIUM].new_tx(info.height, feerate)
            self.stats[SHORT].new_tx(info.height, feerate)
            self.stats[LONG].new_tx(info.height, feerate)
            self.tracked[info.txid] = _Tracked(info.height, bucket)

    def remove_tx(self, txid: bytes) -> bool:
        """A transaction left the mempool otherwise than in a block (Core's removeTx)."""
        with self.lock:
            return self._remove_tx(txid, in_block=False)

    def _remove_tx(self, txid: bytes, in_block: bool) -> bool:
        tracked = self.tracked.pop(txid, None)
        if tracked is None:
            return False
        for name in (MEDIUM, SHORT, LONG):
            self.stats[name].remove_tx(tracked.height, self.best_seen_height, tracked.bucket, in_block)
        return True

    def process_block(self, removed: list[RemovedMempoolTransactionInfo], height: int) -> None:
        with self.lock:
            if height <= self.best_seen_height:
                return      # side chains and reorgs: assumed random, they do not count
            # best_seen_height moves with clear_current so that the removals below age correctly.
            self.best_seen_height = height
            for stats in self.stats.values():
                stats.clear_current(height)
            for stats in self.stats.values():
                stats.update_moving_averages()
            counted = sum(1 for tx in removed if self._process_block_tx(height, tx))
            if self.first_recorded_height == 0 and counted > 0:
                self.first_recorded_height = self.best_seen_height
                _log.debug("Blockpolicy first recorded height %u", self.first_recorded_height)
            _log.debug("Blockpolicy estimates updated by %u of %u block txs, since last block %u of %u tracked, "
                       "mempool map size %u, max target %u from %s", counted, len(removed), self.tracked_txs,
                       self.tracked_txs + self.untracked_txs, len(self.tracked), self.max_usable_estimate(),
                       "historical" if self.historical_block_span() > self.block_span() else "current")
            self.tracked_txs = self.untracked_txs = 0

    def _process_block_tx(self, height: int, tx: RemovedMempoolTransactionInfo) -> bool:
        if not self._remove_tx(tx.txid, in_block=True):
            return False        # not tracked
        blocks_to_confirm = height - tx.height      # 1: confirmed in the first block it could be
        if blocks_to_confirm <= 0:
            _log.debug("Blockpolicy error Transaction had negative blocksToConfirm")
            return False
        feerate = float(fee_per_k(tx.fee, tx.vsize))
        for name in (MEDIUM, SHORT, LONG):
            self.stats[name].record(blocks_to_confirm, feerate)
        return True

    def flush_unconfirmed(self) -> None:
        """At shutdown: every transaction still tracked counts as having left unconfirmed."""
        with self.lock:
            count = len(self.tracked)
            for txid in sorted(self.tracked):      # Core walks its std::map, in txid order
                self._remove_tx(txid, in_block=False)
            _log.debug("Recorded %u unconfirmed txs from mempool", count)

    # -- spans ---------------------------------------------------------------------------

    def block_span(self) -> int:
        if self.first_recorded_height == 0:
            return 0
        return self.best_seen_height - self.first_recorded_height

    def historical_block_span(self) -> int:
        if self.historical_first == 0:
            return 0
        if _u32(self.best_seen_height - self.historical_best) > OLDEST_ESTIMATE_HISTORY:
            return 0
        return self.historical_best - self.historical_first

    def max_usable_estimate(self) -> int:
        """Half the blocks of data seen, so there are enough potential failures for an estimate."""
        return min(self.stats[LONG].max_confirms(), max(self.block_span(), self.historical_block_span()) // 2)

    def highest_target_tracked(self, horizon: str) -> int:
        with self.lock:
            return self.stats[horizon].max_confirms()

    # -- estimates ---------------------------------------------------------------------

    def estimate_raw_fee(self, conf_target: int, success_threshold: float, horizon: str,
                         result: EstimationResult | None = None) -> int:
        """Core's estimateRawFee: sat/kvB at one horizon and threshold; 0 for none."""
        sufficient = SUFFICIENT_TXS_SHORT if horizon == SHORT else SUFFICIENT_FEETXS
        with self.lock:
            stats = self.stats[horizon]
            if conf_target <= 0 or conf_target > stats.max_confirms() or success_threshold > 1:
                return 0
            median = stats.estimate_median_val(conf_target, sufficient, success_threshold,
                                               self.best_seen_height, result)
            return 0 if median < 0 else llround(median)

    def _estimate_combined_fee(self, conf_target: int, success_threshold: float, check_shorter_horizon: bool,
                               result: EstimationResult | None) -> float:
        """The estimate from the shortest horizon tracking `conf_target`; with
        `check_shorter_horizon`, a lower answer from a shorter horizon's longest target wins."""
        short, medium, long = self.stats[SHORT], self.stats[MEDIUM], self.stats[LONG]
        height = self.best_seen_height
        estimate = -1.0
        if 1 <= conf_target <= long.max_confirms():
            if conf_target <= short.max_confirms():
                estimate = short.estimate_median_val(conf_target, SUFFICIENT_TXS_SHORT, success_threshold, height,
                                                     result)
            elif conf_target <= medium.max_confirms():
                estimate = medium.estimate_median_val(conf_target, SUFFICIENT_FEETXS, success_threshold, height,
                                                      result)
            else:
                estimate = long.estimate_median_val(conf_target, SUFFICIENT_FEETXS, success_threshold, height,
                                                    result)
            if check_shorter_horizon:
                temp = EstimationResult()
                if conf_target > medium.max_confirms():
                    med_max = medium.estimate_median_val(medium.max_confirms(), SUFFICIENT_FEETXS,
                                                         success_threshold, height, temp)
                    if med_max > 0 and (estimate == -1 or med_max < estimate):
                        estimate = med_max
                        if result is not None:
                            _copy(temp, result)
                if conf_target > short.max_confirms():
                    short_max = short.estimate_median_val(short.max_confirms(), SUFFICIENT_TXS_SHORT,
                                                          success_threshold, height, temp)
                    if short_max > 0 and (estimate == -1 or short_max < estimate):
                        estimate = short_max
                        if result is not None:
                            _copy(temp, result)
        return estimate

    def _estimate_conservative_fee(self, double_target: int, result: EstimationResult | None) -> float:
        """For a conservative estimate, the 95% threshold at 2 * target must also hold on the
        longer horizons."""
        short, medium, long = self.stats[SHORT], self.stats[MEDIUM], self.stats[LONG]
        height = self.best_seen_height
        estimate = -1.0
        temp = EstimationResult()
        if double_target <= short.max_confirms():
            estimate = medium.estimate_median_val(double_target, SUFFICIENT_FEETXS, DOUBLE_SUCCESS_PCT, height,
                                                  result)
        if double_target <= medium.max_confirms():
            long_estimate = long.estimate_median_val(double_target, SUFFICIENT_FEETXS, DOUBLE_SUCCESS_PCT, height,
                                                     temp)
            if long_estimate > estimate:
                estimate = long_estimate
                if result is not None:
                    _copy(temp, result)
        return estimate

    def estimate_smart_fee(self, conf_target: int, conservative: bool) -> tuple[int, int]:
        """Core's estimateSmartFee: (sat/kvB or 0 for none, the target the answer is for).

        The highest of: 60% success at target/2, 85% at target, 95% at 2 * target, each from the
        shortest horizon tracking it (and the shorter horizons' longest targets, which keeps the
        estimates increasing with urgency); conservative estimates, or no answer so far, also
        require 95% at 2 * target on the longer horizons."""
        with self.lock:
            returned = conf_target
            if conf_target <= 0 or conf_target > self.stats[LONG].max_confirms():
                return 0, returned
            if conf_target == 1:
                conf_target = 2     # no reasonable estimate is possible for the next block alone
            conf_target = min(conf_target, self.max_usable_estimate())
            returned = conf_target
            if conf_target <= 1:
                return 0, returned
            temp = EstimationResult()
            median = self._estimate_combined_fee(conf_target // 2, HALF_SUCCESS_PCT, True, temp)
            actual = self._estimate_combined_fee(conf_target, SUCCESS_PCT, True, temp)
            median = max(median, actual)
            double = self._estimate_combined_fee(2 * conf_target, DOUBLE_SUCCESS_PCT, not conservative, temp)
            median = max(median, double)
            if conservative or median == -1:
                median = max(median, self._estimate_conservative_fee(2 * conf_target, temp))
            if median < 0:
                return 0, returned
            return llround(median), returned


def _copy(source: EstimationResult, target: EstimationResult) -> None:
    target.passed, target.failed = source.passed, source.failed
    target.decay, target.scale = source.decay, source.scale
