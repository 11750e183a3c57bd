"""The fee estimator's file (quill.chain.fee_estimates_file): what it keeps comes back exactly,
and a file Core would not read (too new, damaged, inconsistent, stale) leaves the estimator
empty with a warning, never an error. The estimates themselves are compared with the real Core
in test_fee_estimator_vs_core.py."""
from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest

from quill.chain import fee_estimates_file as ff
from quill.chain.fee_estimator import (
    HORIZONS,
    BlockPolicyEstimator,
    EstimationResult,
    NewMempoolTransactionInfo,
    RemovedMempoolTransactionInfo,
)


def _txid(i: int) -> bytes:
    return i.to_bytes(32, "little")


def fed_estimator() -> BlockPolicyEstimator:
    """Twenty blocks of ten transactions each, fee rates 1 to 10 sat/vB; the cheaper half waits a block."""
    est = BlockPolicyEstimator()
    waiting: list[RemovedMempoolTransactionInfo] = []
    n = 0
    for height in range(1, 21):
        est.mempool_removed_for_block(waiting, height)      # as the chain tells it (service listeners)
        waiting = []
        for k in range(10):
            n += 1
            fee = (k + 1) * 1000 + n
            est.process_transaction(NewMempoolTransactionInfo(_txid(n), fee, 1000, height, False, False, True, True))
            waiting.append(RemovedMempoolTransactionInfo(_txid(n), fee, 1000, height))
    est.process_block(waiting, 21)
    return est


def answers(est: BlockPolicyEstimator) -> list[Any]:
    out: list[Any] = [est.estimate_smart_fee(t, c) for t in (2, 5, 10) for c in (False, True)]
    for horizon in HORIZONS:
        result = EstimationResult()
        out.append((est.estimate_raw_fee(2, 0.85, horizon, result), result))
    return out


def test_a_fed_estimator_estimates() -> None:
    est = fed_estimator()
    rate, blocks = est.estimate_smart_fee(5, False)
    assert rate > 0 and blocks == 5
    # first recorded at 2 (the first confirmations), best 21: half of 19 blocks
    assert est.estimate_smart_fee(1008, True)[1] == est.max_usable_estimate() == 9


def test_the_file_gives_back_the_same_estimates(tmp_path: Path) -> None:
    est = fed_estimator()
    path = str(tmp_path / ff.FILE_NAME)
    assert ff.write(est, path)
    again = BlockPolicyEstimator()
    assert ff.load(again, path)
    # The file keeps the averages, not the mempool's counts, which Core also rebuilds.
    assert again.best_seen_height == est.best_seen_height
    assert (again.historical_first, again.historical_best) == (est.first_recorded_height, est.best_seen_height)
    assert answers(again) == answers(est)


def _saved(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    path = str(tmp_path / ff.FILE_NAME)
    ff.write(fed_estimator(), path)
    with open(path) as f:
        return path, json.load(f)


@pytest.mark.parametrize("damage, message", [
    (lambda d: d.update(version=ff.CURRENT_FEES_FILE_VERSION + 1), "too high to be read"),
    (lambda d: d["medium"].update(decay=1.0), "Decay must be between 0 and 1"),
    (lambda d: d["short"].update(scale=0), "Scale must be non-zero"),
    (lambda d: d["long"]["tx_ct_avg"].pop(), "Mismatch in tx count bucket count"),
    (lambda d: d["long"]["fail_avg"].pop(), "Mismatch in confirms tracked for failures"),
    (lambda d: d.update(historical_first=d["historical_best"] + 1), "Historical block range"),
    (lambda d: d.update(buckets=[1.0]), "between 2 and 1000 feerate buckets"),
    (lambda d: d["medium"].update(conf_avg="x"), "Mismatch in feerate conf average"),
])
def test_a_damaged_file_is_ignored_with_cores_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                      damage: Any, message: str) -> None:
    path, data = _saved(tmp_path)
    damage(data)
    with open(path, "w") as f:
        json.dump(data, f)
    est = BlockPolicyEstimator()
    with caplog.at_level(logging.WARNING, logger="quill.chain"):
        assert not ff.load(est, path)
    assert message in caplog.text
    assert est.best_seen_height == 0 and answers(est) == answers(BlockPolicyEstimator())


def test_a_file_that_is_not_json_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / ff.FILE_NAME
    path.write_bytes(b"\x00garbage")
    assert not ff.load(BlockPolicyEstimator(), str(path))


def test_an_older_version_is_ignored_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path, data = _saved(tmp_path)
    data["version"] = ff.CURRENT_FEES_FILE_VERSION - 1
    with open(path, "w") as f:
        json.dump(data, f)
    est = BlockPolicyEstimator()
    with caplog.at_level(logging.WARNING, logger="quill.chain"):
        ff.load(est, path)
    assert "Incompatible old fee estimation data" in caplog.text
    assert est.best_seen_height == 0


def test_a_stale_file_is_read_only_when_asked(tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    now = time.time()
    os.utime(path, (now - 61 * 3600, now - 61 * 3600))
    assert not ff.load(BlockPolicyEstimator(), path)
    assert ff.load(BlockPolicyEstimator(), path, accept_stale=True)
    os.utime(path, (now - 60 * 3600 - 1800, now - 60 * 3600 - 1800))     # 60 whole hours: not yet stale
    assert ff.load(BlockPolicyEstimator(), path)


def test_flushing_counts_the_waiting_transactions_as_left_unconfirmed(tmp_path: Path) -> None:
    est = fed_estimator()
    est.process_transaction(NewMempoolTransactionInfo(_txid(10_000), 5000, 1000, 21, False, False, True, True))
    for height in range(22, 26):
        est.process_block([], height)
    before = est.stats["short"].fail_avg[0][:]
    assert ff.flush(est, str(tmp_path / ff.FILE_NAME))
    assert est.tracked == {}
    assert sum(est.stats["short"].fail_avg[0]) == sum(before) + 1


def test_untracked_transactions_do_not_count() -> None:
    est = BlockPolicyEstimator()
    est.process_block([], 1)
    flags = [(True, False, True, True), (False, True, True, True), (False, False, False, True),
             (False, False, True, False)]
    for i, (bypassed, package, current, no_parents) in enumerate(flags):
        est.process_transaction(NewMempoolTransactionInfo(_txid(i), 1000, 100, 1, bypassed, package, current,
                                                          no_parents))
    est.process_transaction(NewMempoolTransactionInfo(_txid(9), 1000, 100, 0, False, False, True, True))  # behind
    assert est.tracked == {} and est.untracked_txs == 4


def test_the_file_is_also_written_periodically(tmp_path: Path) -> None:
    path = tmp_path / ff.FILE_NAME
    flusher = ff.PeriodicFlush(fed_estimator(), str(path), interval=0.05)
    flusher.start()
    try:
        deadline = time.monotonic() + 10
        while not path.exists():
            assert time.monotonic() < deadline, "no periodic write"
            time.sleep(0.02)
    finally:
        flusher.stop()
    again = BlockPolicyEstimator()
    assert ff.load(again, str(path)) and again.best_seen_height == 21
