"""The modules mypyc compiles (quill.compiled, issue 28): an install runs the compiled ones, and they
answer byte for byte what their pure-Python source answers, bad input and errors included."""
import importlib
import json
import os
import random
import subprocess
import sys
from importlib.machinery import ExtensionFileLoader
from pathlib import Path

import pytest

import quill.compiled
from quill.handlers import psbt as psbt_handlers
from quill.handlers import rawtransactions
from quill.rpc import univalue
from quill.rpc.errors import RPCError
from tests.kit.txcases import chain_of, golden_case, golden_case_ids, make_ctx
from tests.kit.vectors import load_json

ROOT = Path(__file__).resolve().parents[2]


def test_an_install_runs_the_compiled_modules():
    """`make .venv/.installed` (CI's install) compiles them: a silent fall-back to pure Python fails
    here. QUILL_PURE_PYTHON=1 is the one way to run the suite on the .py files on purpose."""
    if os.environ.get(quill.compiled.PURE_ENV):
        pytest.skip(f"{quill.compiled.PURE_ENV} is set: the suite runs the pure-Python modules")
    assert quill.compiled.PURE_REASON is None, quill.compiled.describe()
    for name in quill.compiled.MODULES:
        module = importlib.import_module(name)
        assert isinstance(module.__loader__, ExtensionFileLoader), f"{name} loaded from {module.__file__}"
    assert quill.compiled.describe() == f"quill: {len(quill.compiled.MODULES)} modules compiled by mypyc"


def test_the_switch_loads_every_module_from_its_source():
    out = _run_in_child("pure", "import importlib, json, quill.compiled as c\n"
                                "print(json.dumps([c.PURE_REASON] + [importlib.import_module(m).__file__ "
                                "for m in c.MODULES]))")
    reason, *files = json.loads(out)
    assert reason == f"{quill.compiled.PURE_ENV} is set"
    assert files == [quill.compiled.source_path(m) for m in quill.compiled.MODULES]


def _run_in_child(mode: str, code: str) -> str:
    env = dict(os.environ)
    env.pop(quill.compiled.PURE_ENV, None)
    if mode == "pure":
        env[quill.compiled.PURE_ENV] = "1"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _answer(method: str, args: list, chain: str = "main", deprecated: tuple = ()) -> str:
    """The reply's bytes as quilld writes them, or the RPC error in Core's form."""
    handler = {m.name: m.handler for m in (*rawtransactions.METHODS, *psbt_handlers.METHODS)}[method]
    try:
        return univalue.encode(handler(make_ctx(chain, deprecated), args)).decode()
    except RPCError as e:
        return f"error {e.code} {e.message}"


def corpus_answers() -> list[str]:
    """decoderawtransaction and decodescript of Core's transaction vectors (each reading, each
    output's and input's script, cut short) and of the golden RPC cases."""
    answers = []
    for name in ("tx_valid.json", "tx_invalid.json"):
        for entry in load_json(f"core/{name}"):
            if len(entry) != 3:
                continue  # a comment line
            hexstr = entry[1]
            for iswitness in (None, True, False):
                answers.append(_answer("decoderawtransaction", [hexstr, iswitness]))
            answers.append(_answer("decoderawtransaction", [hexstr[:len(hexstr) // 2], None]))
            answers.append(_answer("decoderawtransaction", [hexstr, None], "regtest", ("addresses",)))
            decoded = json.loads(_answer("decoderawtransaction", [hexstr, None]))
            for out in decoded["vout"]:
                answers.append(_answer("decodescript", [out["scriptPubKey"]["hex"]]))
                answers.append(_answer("decodescript", [out["scriptPubKey"]["hex"]], "test", ("addresses",)))
            for txin in decoded["vin"]:
                script = txin.get("scriptSig", {}).get("hex", txin.get("coinbase"))
                answers.append(_answer("decodescript", [script]))
    for bad in ("", "0", "zz", "00" * 10, "0100000000", " 00", "02000000000000000000"):
        answers.append(_answer("decoderawtransaction", [bad, None]))
        answers.append(_answer("decodescript", [bad]))
    for case_id in golden_case_ids():
        case = golden_case(case_id)
        params = list(case["params"])
        n_params = {m.name: len(m.params) for m in rawtransactions.METHODS}[case["method"]]
        answers.append(_answer(case["method"], params + [None] * (n_params - len(params)), chain_of(case)))
    return answers + psbt_corpus_answers()


def psbt_corpus_answers() -> list[str]:
    """decodepsbt, analyzepsbt and finalizepsbt (without and with extraction) of Core's BIP174/BIP370
    vectors, valid, invalid and with Core's messages, of the signer's, combiner's, finalizer's and
    extractor's PSBTs, of each valid one cut short, and of damaged base64."""
    vectors = load_json("core-functional/rpc_psbt.json")
    psbts = [*vectors["valid"], *vectors["invalid"], *(v[0] for v in vectors["invalid_with_msg"]),
             *(v["psbt"] for v in vectors["signer"]), *vectors["combiner"][0]["combine"],
             vectors["finalizer"][0]["finalize"], vectors["extractor"][0]["extract"]]
    psbts += [p[:len(p) // 2] for p in vectors["valid"]]
    psbts += ["", "=", "cHNidP8=", "cHNidP8", "YR==", "!!!!", "cHNidP8BAAoCAAAAAAAAAAAAAA=="]
    answers = []
    for psbt in psbts:
        for chain in ("main", "regtest"):
            answers.append(_answer("decodepsbt", [psbt], chain))
        answers.append(_answer("analyzepsbt", [psbt]))
        answers.append(_answer("finalizepsbt", [psbt, None]))
        answers.append(_answer("finalizepsbt", [psbt, False]))
    return answers


def test_compiled_and_pure_python_answer_alike():
    """Both forms in child processes, whichever this one runs (and this one's: first, so that
    absent vectors skip here, as everywhere, rather than fail a child)."""
    here = corpus_answers()
    name = corpus_answers.__name__
    code = f"import json; from tests.tx.test_compiled import {name}; print(json.dumps({name}()))"
    compiled = json.loads(_run_in_child("compiled", code))
    pure = json.loads(_run_in_child("pure", code))
    assert len(pure) > 1000
    assert any(a.startswith("error ") for a in pure) and any(a.startswith("{") for a in pure)
    for n, (a, b, c) in enumerate(zip(compiled, pure, here, strict=True)):
        assert a == b == c, f"answer {n} differs"


@pytest.mark.parametrize("native", [True, False])
def test_both_checksum_loops_give_the_bips_checksums(monkeypatch, native):
    """Compiled, bech32 and BIP380 checksums loop over the symbols (Polymod.continued); interpreted,
    they use the tables: each way on random input against the BIPs' own algorithms."""
    from quill.tx import address, descriptor
    from tests.tx.test_polymod import bip173_encode, bip380_checksum

    monkeypatch.setattr(address, "_NATIVE", native)
    monkeypatch.setattr(descriptor, "_NATIVE", native)
    rng = random.Random(28)
    for _ in range(300):
        hrp = rng.choice(["bc", "tb", "bcrt", "x" * rng.randrange(1, 30)])
        data = [rng.randrange(32) for _ in range(rng.randrange(0, 60))]
        encoding, const = rng.choice([(address.BECH32, 1), (address.BECH32M, 0x2BC830A3)])
        assert address.bech32_encode(hrp, data, encoding) == bip173_encode(hrp, data, const)
        desc = "".join(rng.choice(descriptor.INPUT_CHARSET) for _ in range(rng.randrange(0, 300)))
        assert descriptor.descriptor_checksum(desc) == bip380_checksum(desc)
        # a character outside INPUT_CHARSET anywhere (ASCII, Latin-1 or beyond): no checksum
        at = rng.randrange(len(desc) + 1)
        bad = desc[:at] + rng.choice(["\n", "\x7f", "\xe9", "\xff", "\u20ac", "\U0001f600"]) + desc[at:]
        assert bip380_checksum(bad) is None
        assert descriptor.descriptor_checksum(bad) is None
