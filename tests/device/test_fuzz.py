"""A CI-sized fuzz run (tests/fuzz/fuzz_device_frames.py runs the full 10,000)."""
from tests.device.rawlink import IDLE_MS
from tests.fuzz.fuzz_device_frames import run

CI_FRAMES = 1500


def test_emulator_survives_random_and_mutated_frames(unix_emulator):
    restarts = unix_emulator.restarts
    result = run(unix_emulator.port, CI_FRAMES, seed=20261121, idle_s=IDLE_MS / 1000 + 0.2)
    assert result["final_ping"] == "idle"
    assert len(result["kinds"]) == 7
    assert unix_emulator.restarts == restarts and unix_emulator.alive()
