"""Fuzz quill-emu's link with random and mutated frames, then check it still answers ping.

    .venv/bin/python -m tests.fuzz.fuzz_device_frames [--count 10000] [--seed N]

Cases, drawn with a seeded RNG: random noise; valid requests with a flipped
byte; truncated frames; frames with a correct CRC around mutated, random or
truncated CBOR (so the decoder and envelope checks see them); random length
fields. Every `--sync` frames a ping must be answered (the device is alive
throughout); at the end, after the idle timeout, the final ping must be answered.
"""
import argparse
import os
import queue
import random
import struct
import subprocess
import time

from quill.device.codec import canonical_dumps
from quill.emulator.launcher import Emulator
from quillfw.wire.framing import MAGIC, encode_frame
from tests.device.rawlink import RawLink

REQUESTS = [
    {"id": "f1", "method": "ping"},
    {"id": "f2", "method": "get_info", "params": {}},
    {"id": "f3", "method": "debug_alloc", "params": {"size": 64}},
    {"id": "f4", "method": "debug_sleep", "params": {"ms": 0, "awaiting_user": False}},
    {"id": "f5", "method": "nope", "params": {"a": [1, -2, b"\x00", {"b": None}]}},
]


def _mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(data))
        data[i] = rng.choice([data[i] ^ (1 << rng.randrange(8)), rng.randrange(256)])
    return bytes(data)


def fuzz_case(rng):
    body = canonical_dumps(rng.choice(REQUESTS))
    kind = rng.randrange(7)
    if kind == 0:
        return "noise", bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200)))
    if kind == 1:
        return "flipped frame", _mutate(rng, encode_frame(body))
    if kind == 2:
        frame = encode_frame(body)
        return "truncated frame", frame[:rng.randrange(1, len(frame))]
    if kind == 3:
        return "mutated cbor", encode_frame(_mutate(rng, body))
    if kind == 4:
        return "random cbor", encode_frame(bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64))))
    if kind == 5:
        return "truncated cbor", encode_frame(body[:rng.randrange(len(body))])
    return "random length", MAGIC + struct.pack(">I", rng.getrandbits(32)) + body


def _sync(link, rid, idle_s, deadline_s=90.0):
    """Ping until answered. A ping written while the device is still reading a fuzzed frame
    (it may lag behind the writes on a loaded machine) is eaten by that frame; the device
    then drops the frame when it goes stale, as a real host's lost-request probe expects, and
    the next ping is answered. Every ping has its own id, so a late answer is never confused."""
    deadline = time.monotonic() + deadline_s
    attempt = 0
    while True:
        time.sleep(idle_s)   # let any partial frame go stale
        attempt += 1
        try:
            return link.ping(f"{rid}-{attempt}", timeout=max(2.0, 4 * idle_s))
        except queue.Empty:
            if time.monotonic() > deadline:
                raise


def run(port, count, seed, sync_every=250, idle_s=0.5, log=print):
    rng = random.Random(seed)
    link = RawLink(port)
    kinds = {}
    try:
        for i in range(count):
            kind, data = fuzz_case(rng)
            kinds[kind] = kinds.get(kind, 0) + 1
            link.write(data)
            if (i + 1) % sync_every == 0:
                _sync(link, f"s{i}", idle_s)
        _, reply = _sync(link, "final", idle_s)
        assert reply["result"] == "idle", reply
        messages = 0
        while not link.messages.empty():
            link.messages.get()
            messages += 1
    finally:
        link.close()
    return {"frames": count, "seed": seed, "kinds": kinds, "final_ping": reply["result"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "big"))
    parser.add_argument("--board", default="pyboard", help="the board modelled (default: the smallest)")
    args = parser.parse_args()
    print(f"seed {args.seed}, {args.count} frames")
    started = time.monotonic()
    with Emulator(board=args.board, idle_ms=300, stderr=subprocess.DEVNULL) as emu:
        result = run(emu.port, args.count, args.seed)
        assert emu.restarts == 0, "the firmware died during the run"
    print(f"{result['frames']} frames in {time.monotonic() - started:.1f} s; "
          f"final ping: {result['final_ping']}; firmware restarts: 0")
    for kind, n in sorted(result["kinds"].items()):
        print(f"  {kind:16s} {n}")


if __name__ == "__main__":
    main()
