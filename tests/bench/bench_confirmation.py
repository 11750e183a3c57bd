"""User confirmation on the emulator (97K heap): the free heap the device reports
with each approver, and the time from an answer in the approval channel to the
signature (the device polls its approver every 20 ms).

    .venv/bin/python -m tests.bench.bench_confirmation
"""
import statistics
import tempfile
import threading
import time
from pathlib import Path

from quill.device.client import DeviceClient
from quill.emulator.asker import write_answer
from quill.emulator.launcher import Emulator, confirmation_options

PUB_HASH = bytes.fromhex("751e76e8199196d454941c45d1b3a323f1433bd6")   # hash160 of 1*G
P2WPKH = b"\x00\x14" + PUB_HASH
SCRIPT_CODE = b"\x76\xa9\x14" + PUB_HASH + b"\x88\xac"
ROUNDS = 10


def _session(client):
    began = client.call("sign_begin", {"version": 2, "locktime": 0, "n_inputs": 1,
                                       "n_outputs": 1, "algorithms": ["segwit_v0"]})
    client.call("sign_add_key", {"secret": bytes(31) + b"\x01"})
    txin = [bytes(32), 0, 0xFFFFFFFF, 50000, P2WPKH]
    token = client.call("sign_add_inputs", {"inputs": [txin]})[0]
    client.call("sign_add_outputs", {"outputs": [[40000, P2WPKH]]})
    return began["heap_free"], {"input_index": 0, "txin": txin, "txin_token": token,
                                "script_code": SCRIPT_CODE, "hash_type": 1, "key_index": 0}


def measure(kind):
    datadir = Path(tempfile.mkdtemp(prefix="quill-bench-confirm-"))
    with Emulator(board="pyboard", confirmation=confirmation_options(kind, datadir)) as emu:   # the smallest
        with DeviceClient(emu.port, probe_interval=0.2) as client:
            boot_free = client.get_info()["heap_free"]
            latencies = []
            for _ in range(ROUNDS if kind == "channel" else 1):
                begin_free, sign = _session(client)
                if kind == "channel":
                    answered = {}

                    def answer(answered=answered):
                        while not (datadir / "confirm-request").exists():
                            time.sleep(0.002)
                        answered["t"] = time.monotonic()
                        write_answer(datadir, "approve")
                    threading.Thread(target=answer).start()
                client.call("sign_segwit_v0", sign, awaits_user=True)
                if kind == "channel":
                    latencies.append((time.monotonic() - answered["t"]) * 1000)
                client.call("sign_end")
    return boot_free, begin_free, latencies


def main():
    print("approver | heap_free at get_info | heap_free after sign_begin | answer -> signature ms (median, max)")
    print("--- | --- | --- | ---")
    for kind in ("auto", "channel"):
        boot, begin, lat = measure(kind)
        timing = f"{statistics.median(lat):.1f}, {max(lat):.1f}" if lat else "- (no wait)"
        print(f"{kind} | {boot} | {begin} | {timing}")


if __name__ == "__main__":
    main()
