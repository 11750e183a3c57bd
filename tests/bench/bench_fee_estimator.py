"""The fee estimator's cost (quill.chain.fee_estimator): what each connected block adds to the
chain's work, and what estimatesmartfee / estimaterawfee cost, over a long fee history.

    .venv/bin/python -m tests.bench.bench_fee_estimator [n_blocks]

Each block confirms 100 transactions at rates from 1 to 100 sat/vB (the cheaper ones after a
few blocks' wait), so all three horizons and the mempool's waiting counts hold data.
"""
import random
import sys
import time

from quill.chain.fee_estimator import (
    HORIZONS,
    BlockPolicyEstimator,
    EstimationResult,
    NewMempoolTransactionInfo,
    RemovedMempoolTransactionInfo,
)

TXS_PER_BLOCK = 100


def feed(n_blocks: int) -> tuple[BlockPolicyEstimator, float]:
    rng = random.Random(1)
    est = BlockPolicyEstimator()
    waiting: list[tuple[int, RemovedMempoolTransactionInfo]] = []    # (blocks still to wait, entry)
    elapsed = 0.0
    serial = 0
    for height in range(1, n_blocks + 1):
        confirmed = [entry for wait, entry in waiting if wait <= 0]
        waiting = [(wait - 1, entry) for wait, entry in waiting if wait > 0]
        start = time.perf_counter()
        est.process_block(confirmed, height)
        for _ in range(TXS_PER_BLOCK):
            serial += 1
            rate = rng.randint(1, 100)
            info = NewMempoolTransactionInfo(serial.to_bytes(32, "little"), rate * 141, 141, height,
                                             False, False, True, True)
            est.process_transaction(info)
            waiting.append((max(0, 30 - rate) // 6, RemovedMempoolTransactionInfo(info.txid, info.fee, 141, height)))
        elapsed += time.perf_counter() - start
    return est, elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    est, elapsed = feed(n)
    print(f"{'what':<48} {'per call':>12}")
    print(f"{'a block + its 100 new transactions':<48} {elapsed / n * 1000:>9.2f} ms")
    for target, conservative in ((2, False), (6, True), (144, True)):
        start = time.perf_counter()
        for _ in range(20):
            est.estimate_smart_fee(target, conservative)
        per = (time.perf_counter() - start) / 20
        what = f"estimatesmartfee {target} {'conservative' if conservative else 'economical'}"
        print(f"{what:<48} {per * 1000:>9.2f} ms")
    for target in (2, 48, 1008):
        start = time.perf_counter()
        for _ in range(20):
            for horizon in HORIZONS:
                if target <= est.highest_target_tracked(horizon):
                    est.estimate_raw_fee(target, 0.95, horizon, EstimationResult())
        per = (time.perf_counter() - start) / 20
        what = f"estimaterawfee {target} (each horizon tracking it)"
        print(f"{what:<48} {per * 1000:>9.2f} ms")


if __name__ == "__main__":
    main()
