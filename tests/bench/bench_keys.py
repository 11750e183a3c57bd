"""The device's keys on the emulator (MicroPython unix port) at each board's heap:
time and free heap for BIP39 set-up (PBKDF2-HMAC-SHA512, 2048 rounds of
pure-Python SHA-512), the PIN check (PBKDF2-HMAC-SHA256 at the default rounds),
a wrong PIN, and get_xpub of a BIP84 account (three hardened derivations).
The emulator runs on this machine's CPU: divide by a board's speed ratio for
the board's figure (the PIN's rounds are a per-board setting,
quillfw.keys.methods.register(..., pin_rounds), chosen from such a measurement).

    .venv/bin/python -m tests.bench.bench_keys
"""
import tempfile
import time
from pathlib import Path

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError
from quill.emulator.launcher import Emulator, confirmation_options
from quillfw.keys.methods import DEFAULT_PIN_ROUNDS

WORDS = "abandon " * 11 + "about"
BOARDS = ("pyboard", "rpi_pico")      # the smallest board, and quill-emu's default


def _timed(call):
    start = time.perf_counter()
    try:
        result = call()
    except DeviceError as e:
        result = e
    return (time.perf_counter() - start) * 1000, result


def measure(board):
    datadir = Path(tempfile.mkdtemp(prefix="quill-bench-keys-"))
    rows = []
    with Emulator(board=board, confirmation=[*confirmation_options("auto", datadir), "--keys"]) as emu:
        with DeviceClient(emu.port, short_timeout=120) as client:
            boot = client.get_info()["heap_free"]
            ms, _ = _timed(lambda: client.call("seed_restore", {"mnemonic": WORDS, "pin": "1234"}))
            rows.append(("seed_restore (BIP39 seed + PIN key)", ms, client.get_info()["heap_free"]))
            client.call("lock")
            ms, _ = _timed(lambda: client.call("unlock", {"pin": "0000"}))
            rows.append((f"unlock, wrong PIN ({DEFAULT_PIN_ROUNDS} rounds)", ms,
                         client.get_info()["heap_free"]))
            ms, _ = _timed(lambda: client.call("unlock", {"pin": "1234"}))
            rows.append((f"unlock ({DEFAULT_PIN_ROUNDS} rounds)", ms, client.get_info()["heap_free"]))
            ms, _ = _timed(lambda: client.call("get_xpub", {"path": "m/84h/1h/0h", "network": "test"}))
            rows.append(("get_xpub m/84h/1h/0h", ms, client.get_info()["heap_free"]))
    return boot, rows


def main():
    print("| board | operation | ms | heap free after |")
    print("|---|---|---:|---:|")
    for board in BOARDS:
        boot, rows = measure(board)
        print(f"| {board} | boot | | {boot} |")
        for name, ms, free in rows:
            print(f"| {board} | {name} | {ms:.0f} | {free} |")


if __name__ == "__main__":
    main()
