"""The boot-time known-answer self-test (firmware/quillfw/board/selftest.py): it passes on
CPython and on MicroPython, its known answers are the published ones, a corrupted
answer makes it fail, and the failure reaches get_info over the protocol."""
import csv
import os
import subprocess

import pytest

from boards import boardspec
from quill.device.client import DeviceClient
from quill.emulator.launcher import Emulator
from quillfw.board import selftest
from quillfw.crypto import secp256k1
from tests.boards.boardtest import micropython_binary
from tests.kit.vectors import load_json, vector_path

CHECK_NAMES = [name for name, _, _ in selftest.CHECKS]


def test_the_checks_are_the_ones_the_brief_names():
    assert CHECK_NAMES == ["sha256", "hmac_sha256", "ripemd160", "ecdsa_sign", "ecdsa_verify",
                           "schnorr_sign"]


def test_passes_under_cpython(monkeypatch):
    monkeypatch.delenv(selftest.FAULT_ENV, raising=False)
    assert selftest.run() == "ok"
    assert selftest.status() == "ok" and selftest.passed()


@pytest.mark.parametrize("check", CHECK_NAMES)
def test_a_corrupted_known_answer_fails_that_check(monkeypatch, check):
    monkeypatch.setenv(selftest.FAULT_ENV, check)
    try:
        assert selftest.run() == "failed: " + check
        assert not selftest.passed()
    finally:
        monkeypatch.delenv(selftest.FAULT_ENV)
        selftest.run()
    assert selftest.passed()


def test_a_check_that_raises_fails_without_leaking_its_text(monkeypatch):
    def broken(answer):
        raise ValueError("secret " + selftest._BIP143_KEY)
    monkeypatch.setattr(selftest, "CHECKS", selftest.CHECKS[:2] + (("ecdsa_sign", "00", broken),))
    try:
        assert selftest.run() == "failed: ecdsa_sign"
    finally:
        monkeypatch.undo()
        selftest.run()


def test_the_test_keys_do_not_stay_in_the_key_cache():
    selftest.run()
    assert secp256k1._key_cache_used[0] == 0 and not any(secp256k1._key_cache)


def test_the_ecdsa_known_answer_is_bip143s_native_p2wpkh_signature():
    example = next(e for e in load_json("bips/bip143_examples.json")["examples"]
                   if e["name"] == "Native P2WPKH")
    txin = example["inputs"][1]
    sig = txin["signatures"][0]
    assert txin["private_key"] == selftest._BIP143_KEY
    assert txin["public_key"] == selftest._BIP143_PUBKEY
    assert sig["sighash"] == selftest._BIP143_SIGHASH
    assert sig["signature"] == selftest._BIP143_SIGNATURE + "01"  # + SIGHASH_ALL byte


def test_the_schnorr_known_answer_is_bip340_vector_1():
    with open(vector_path("bips/bip340_test_vectors.csv")) as f:
        row = next(r for r in csv.DictReader(f) if r["index"] == "1")
    assert row["secret key"].lower() == selftest._BIP340_KEY
    assert row["aux_rand"].lower() == selftest._BIP340_AUX
    assert row["message"].lower() == selftest._BIP340_MSG
    assert row["signature"].lower() == selftest._BIP340_SIGNATURE


def test_the_hash_known_answers_are_the_published_ones():
    import hashlib
    import hmac
    answers = {name: answer for name, answer, _ in selftest.CHECKS}
    assert answers["sha256"] == hashlib.sha256(b"abc").hexdigest()
    assert answers["hmac_sha256"] == hmac.new(b"Jefe", b"what do ya want for nothing?",
                                              "sha256").hexdigest()
    try:
        ripemd = hashlib.new("ripemd160", b"abc").hexdigest()
    except ValueError:  # OpenSSL 3 without the legacy provider
        ripemd = "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"  # RIPEMD-160 reference page
    assert answers["ripemd160"] == ripemd


def _micropython_selftest(mpy_root, fault=None):
    env = dict(os.environ)
    env.pop(selftest.FAULT_ENV, None)
    if fault:
        env[selftest.FAULT_ENV] = fault
    code = ("import sys\nsys.path.insert(0, %r)\nfrom quillfw.board import selftest\n"
            "print('STATUS', selftest.run(), selftest.passed())" % str(mpy_root))
    heap = str(boardspec.load("unix").heap_free_bytes)
    proc = subprocess.run([micropython_binary(), "-X", "heapsize=" + heap, "-c", code], env=env,
                          capture_output=True, text=True, timeout=60)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("STATUS ")]
    assert proc.returncode == 0 and lines, proc.stdout + proc.stderr
    return lines[0][len("STATUS "):]


def test_passes_under_micropython_from_the_built_mpy(builds):
    assert _micropython_selftest(builds["unix"].root) == "ok True"


@pytest.mark.parametrize("check", ["sha256", "ripemd160", "ecdsa_verify", "schnorr_sign"])
def test_a_corrupted_known_answer_fails_under_micropython(builds, check):
    assert _micropython_selftest(builds["unix"].root, check) == "failed: %s False" % check


def _unix_board_emulator(mpy_root):
    """boards/unix/main.py on the built .mpy files, at the unix board's heap, behind a pty."""
    board = boardspec.load("unix")
    emu = Emulator(heapsize=str(board.heap_free_bytes), restart=False)
    main = board.dir / "main.py"
    emu.command = emu.command[:3] + [
        "-c", "import sys\nsys.path.insert(0, %r)\nexec(open(%r).read())" % (str(mpy_root), str(main))]
    return emu


@pytest.mark.parametrize("fault, expected", [(None, "ok"), ("ecdsa_sign", "failed: ecdsa_sign")])
def test_get_info_reports_the_selftest_over_the_protocol(builds, monkeypatch, fault, expected):
    if fault:
        monkeypatch.setenv(selftest.FAULT_ENV, fault)
    else:
        monkeypatch.delenv(selftest.FAULT_ENV, raising=False)
    with _unix_board_emulator(builds["unix"].root) as emu, DeviceClient(emu.port) as client:
        info = client.get_info()
    assert info["selftest"] == expected
    assert info["board"] == "unix" and info["implementation"] == "micropython"
