"""The seed on flash under a PIN (quillfw.keys.store) and the key methods
(quillfw.keys.methods) through the dispatcher, under CPython and MicroPython:
the file never holds the seed in clear, a wrong PIN counts before it is tried,
N wrong PINs in a row wipe the seed, a locked or empty device refuses key
operations with LOCKED, and no error text quotes a PIN or a word."""
import os

from quillfw.board.runtime import build_dispatcher
from quillfw.keys import methods as key_methods
from quillfw.keys.store import SeedStore, WrongPin
from quillfw.wire.errors import INVALID_PARAMS, LOCKED
from tests.firmware import fwtest

SEED = bytes(range(64))
ROUNDS = 10
WORDS = "abandon " * 11 + "about"
TPUB_84_1_0 = ("tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxys"
               "QAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M")


def _tmpfile(name):
    path = "/tmp/quill-keys-test-%s-%s" % (name, os.urandom(4).hex())
    for p in (path, path + ".tmp"):
        try:
            os.remove(p)
        except OSError:
            pass
    return path


def test_store_round_trip_and_encryption():
    path = _tmpfile("rt")
    store = SeedStore(path)
    assert not store.exists() and store.status() is None
    store.save(SEED, "1234", ROUNDS, 3)
    with open(path, "rb") as f:
        raw = f.read()
    assert SEED[:16] not in raw and SEED[32:48] not in raw and b"1234" not in raw
    assert store.status() == (True, 3, 0)
    assert bytes(store.unlock("1234")) == SEED
    store.wipe()
    assert not store.exists()


def test_wrong_pins_count_and_wipe():
    store = SeedStore(_tmpfile("wipe"))
    store.save(SEED, "1234", ROUNDS, 3)
    with fwtest.raises(WrongPin) as r:
        store.unlock("9999")
    assert r.value.attempts_left == 2 and store.status() == (True, 3, 1)
    assert bytes(store.unlock("1234")) == SEED       # a right PIN clears the count
    assert store.status() == (True, 3, 0)
    for left in (2, 1, 0):
        with fwtest.raises(WrongPin) as r:
            store.unlock("0000")
        assert r.value.attempts_left == left
    assert not store.exists() and store.unlock("1234") is None


def test_in_memory_store():
    store = SeedStore(None)
    store.save(SEED, "", ROUNDS, 5)
    assert store.status() == (False, 5, 0)
    assert bytes(store.unlock("")) == SEED


class Ctx:
    state = "idle"


def _call(d, method, **params):
    reply = d.dispatch(Ctx(), {"id": "1", "method": method, "params": params})
    return reply


def _result(d, method, **params):
    reply = _call(d, method, **params)
    assert "error" not in reply, reply
    return reply["result"]


def _error(d, method, **params):
    reply = _call(d, method, **params)
    assert "error" in reply, reply
    return reply["error"]


def test_device_lifecycle_through_the_protocol():
    path = _tmpfile("proto")
    d = _dispatcher(path)
    info = _result(d, "get_info")
    assert info["keys"]["state"] == "uninitialized" and "bip32" in info["capabilities"]
    err = _error(d, "get_xpub", path="m/84h/1h/0h")
    assert err["code"] == LOCKED and err["data"] == "no_seed"
    err = _error(d, "seed_restore", mnemonic=WORDS.replace("about", "abandon"), pin="1234")
    assert err["code"] == INVALID_PARAMS and "abandon" not in err["message"]
    err = _error(d, "seed_restore", mnemonic=WORDS, pin="12")
    assert err["code"] == INVALID_PARAMS and "12" not in err["message"].replace("PIN must be 4 to 64", "")
    assert _result(d, "seed_restore", mnemonic=WORDS, pin="1234")["fingerprint"] == b"\x73\xc5\xda\x0a"
    got = _result(d, "get_xpub", path="m/84h/1h/0h", network="test")
    assert got["xpub"] == TPUB_84_1_0 and got["fingerprint"] == b"\x73\xc5\xda\x0a"
    assert _error(d, "seed_restore", mnemonic=WORDS, pin="1234")["code"] == INVALID_PARAMS
    assert _error(d, "get_xpub", path="m/x")["code"] == INVALID_PARAMS
    assert _error(d, "get_xpub", path="m/0", network="regtest")["code"] == INVALID_PARAMS
    _result(d, "lock")
    info = _result(d, "get_info")["keys"]
    assert info["state"] == "locked" and "fingerprint" not in info and info["pin_attempts_left"] == 10
    err = _error(d, "get_xpub", path="m/84h/1h/0h")
    assert err["code"] == LOCKED and err["data"] == "locked"
    err = _error(d, "unlock", pin="4321")
    assert err["code"] == LOCKED and err["data"] == "wrong_pin" and "4321" not in err["message"]
    assert "9 attempts left" in err["message"]
    assert _result(d, "unlock", pin="1234")["fingerprint"] == b"\x73\xc5\xda\x0a"
    # a new boot finds the seed locked
    d2 = _dispatcher(path)
    assert _result(d2, "get_info")["keys"]["state"] == "locked"
    _result(d2, "wipe")
    assert _result(d2, "get_info")["keys"]["state"] == "uninitialized"
    assert not SeedStore(path).exists()


def test_generate_mixes_host_entropy_and_returns_the_words_once():
    d = _dispatcher(None)
    a = _result(d, "seed_generate", words=12, pin="1234", entropy=bytes(32))
    assert len(a["mnemonic"].split()) == 12 and len(a["fingerprint"]) == 4
    _result(d, "wipe")
    b = _result(d, "seed_generate", words=24, pin="1234", entropy=bytes(32))
    assert len(b["mnemonic"].split()) == 24
    # the same host entropy twice: the device's own randomness still differs
    assert b["mnemonic"].split()[:12] != a["mnemonic"].split()
    assert _error(d, "seed_generate", words=13, pin="1234")["code"] == INVALID_PARAMS


def _dispatcher(seed_path):
    """A board's start-up: the dispatcher, then the key methods."""
    dispatcher = build_dispatcher("test")
    key_methods.register(dispatcher, seed_path, 10)
    return dispatcher
