"""Every board signs the 500-input P2WPKH transaction of the signing benchmarks at
its own heap, with the firmware as its .mpy files (board_heap.py explains the heap
a frozen board gets). Signatures are checked with coincurve against sighashes from
python-bitcointx; the peak heap per board is printed (tests/bench/bench_board_heap.py
prints the full table)."""
import coincurve
import pytest
from bitcointx.core import CMutableTransaction, COutPoint, CTxIn, CTxOut
from bitcointx.core.script import SIGVERSION_WITNESS_V0, CScript, SignatureHash

from boards import boardspec
from tests.boards import board_heap

BOARDS = boardspec.names()
CHECKED_INPUTS = range(0, board_heap.N_INPUTS, 20)   # 25 per board: the session test checks all


@pytest.fixture(scope="module")
def runs(builds):
    result = {}
    for name in BOARDS:
        board = boardspec.load(name)
        heap = board_heap.emulator_heap(board, builds[name].root)
        result[name] = (heap, board_heap.sign_500_p2wpkh(builds[name].root, heap))
    return result


@pytest.mark.parametrize("name", BOARDS)
def test_board_signs_500_p2wpkh_inputs_within_its_heap(runs, name):
    heap, run = runs[name]
    print("\n%s: emulator heap %d B (board %d B), baseline %d B, peak live %d B, peak before gc %d B"
          % (name, heap, boardspec.load(name).heap_free_bytes, run.baseline, run.peak_live,
             run.peak_before_gc))
    assert not run.error, run.error
    assert len(run.signatures) == board_heap.N_INPUTS
    assert 0 < run.baseline <= run.peak_live < run.heap <= heap


@pytest.mark.parametrize("name", BOARDS)
def test_the_signatures_verify(runs, name):
    run = runs[name][1]
    version, locktime, inputs, outputs, pubs, hash_types = run.transaction
    tx = CMutableTransaction([CTxIn(COutPoint(txid, vout), nSequence=seq)
                              for txid, vout, seq, *_ in inputs],
                             [CTxOut(amount, CScript(spk)) for amount, spk in outputs],
                             nLockTime=locktime, nVersion=version)
    for i in CHECKED_INPUTS:
        _, _, _, amount, spk, k = inputs[i]
        script_code = CScript(b"\x76\xa9\x14" + spk[2:] + b"\x88\xac")
        digest = SignatureHash(script_code, tx, i, hash_types[i], amount=amount,
                               sigversion=SIGVERSION_WITNESS_V0)
        sig = run.signatures[i]
        assert sig[-1] == hash_types[i]
        assert coincurve.PublicKey(pubs[k]).verify(sig[:-1], bytes(digest), hasher=None), i


def test_a_frozen_board_is_credited_only_the_session_modules_bytecode(builds):
    board = boardspec.load("pyboard")
    root = builds["pyboard"].root
    modules = board_heap.session_modules(root)
    assert "quillfw.signing.session" in modules and "quillfw.crypto.secp256k1_gtable" in modules
    assert "quillfw.wire.server" not in modules  # not imported by the session: no credit
    credit = board_heap.emulator_heap(board, root) - board.heap_free_bytes
    assert 0 < credit < builds["pyboard"].mpy_bytes
