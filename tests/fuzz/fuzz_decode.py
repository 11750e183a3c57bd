"""Hypothesis-driven fuzzer for decoderawtransaction (run standalone; not part of the test suite).

    .venv/bin/python -m tests.fuzz.fuzz_decode [--inputs N] [--seed S]

Inputs: Core's tx_valid/tx_invalid transactions and the bitcoin-tx golden hex
files, mutated (byte edits, truncation, splices, CompactSize-shaped inserts),
plus raw random bytes and random text. Oracle for every input:
* the handler returns a result or raises RPCError(-22, "TX decode failed"), nothing else;
* a result renders as JSON, and the decoded transaction re-serializes to the input bytes;
* iswitness=true/false decodings agree with the heuristic's choice.
Prints how many inputs were tried and how long it took.
"""
import argparse
import glob
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from quill.handlers.rawtransactions import decoderawtransaction
from quill.rpc import univalue
from quill.rpc.errors import RPCError
from quill.tx.decode import TxDecodeError, decode_tx
from tests.kit.toolchains import vectors_location

CTX = SimpleNamespace(node=SimpleNamespace(chain_name="main", deprecated_rpc=frozenset()))


def corpus():
    vectors = vectors_location()
    seeds = []
    for name in ("tx_valid", "tx_invalid"):
        path = vectors / "core" / f"{name}.json"
        if path.exists():
            seeds += [bytes.fromhex(r[1]) for r in json.loads(path.read_text()) if isinstance(r[0], list)]
    for path in glob.glob(str(vectors / "core-util" / "*.hex")):
        text = Path(path).read_text().strip()
        if len(text) > 20:
            seeds.append(bytes.fromhex(text))
    if not seeds:
        sys.exit(f"no seed transactions found under {vectors} (set QUILL_VECTORS)")
    return seeds


SEEDS = corpus()
COUNT = 0

edit = st.tuples(st.integers(0, 1 << 16), st.sampled_from(["set", "insert", "delete", "compact"]),
                 st.integers(0, 255))


@st.composite
def mutated(draw):
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for pos, kind, value in draw(st.lists(edit, min_size=1, max_size=4)):
        pos %= len(data) + 1
        if kind == "set" and pos < len(data):
            data[pos] = value
        elif kind == "insert":
            data[pos:pos] = bytes([value])
        elif kind == "delete":
            del data[pos:pos + 1 + value % 8]
        else:
            # A CompactSize prefix byte with a large or non-canonical body.
            data[pos:pos] = bytes([0xFD + value % 3]) + bytes([value]) * (2 + 2 * (value % 3))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)


inputs = (mutated().map(bytes.hex)
          | st.binary(max_size=200).map(bytes.hex)
          | st.text(alphabet="0123456789abcdefABCDEF \n", max_size=60))


def check(hexstring):
    global COUNT
    COUNT += 1
    try:
        result = decoderawtransaction(CTX, [hexstring, None])
    except RPCError as e:
        assert (e.code, e.message) == (-22, "TX decode failed"), e
        return
    univalue.dumps(result)
    data = bytes.fromhex(hexstring)
    tx = decode_tx(data)
    assert tx.serialize() == data, "re-serialization differs from the input"
    assert tx.txid_hex() == result["txid"]
    # The chosen reading is one of the two single-mode readings.
    readings = []
    for only_witness in (True, False):
        try:
            readings.append(decode_tx(data, not only_witness, only_witness))
        except TxDecodeError:
            pass
    assert tx in readings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()

    @settings(max_examples=args.inputs, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck))
    @given(inputs)
    def fuzz(hexstring):
        check(hexstring)

    if args.seed is not None:
        fuzz = seed(args.seed)(fuzz)
    start = time.monotonic()
    fuzz()
    elapsed = time.monotonic() - start
    print(f"fuzz_decode: {COUNT} inputs tried in {elapsed:.1f} s "
          f"({COUNT / elapsed:.0f}/s), {len(SEEDS)} seed transactions, no failure")


if __name__ == "__main__":
    main()
