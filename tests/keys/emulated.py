"""A quill-emu process for the key tests: its pty, its state directory, its
stderr (the firmware's log) and its command line as `ps` shows it."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.kit import boards
from tests.kit.boards import DEFAULT_BOARD, SMALLEST_BOARD  # noqa: F401 (the key tests' boards)

VENV_BIN = Path(sys.executable).parent
TEST_MNEMONIC = "abandon " * 11 + "about"


class EmulatedDevice:
    """quill-emu modelling board (quill-emu --board; its default, the Pico, unless named), with args."""

    def __init__(self, workdir: Path, *args: str, board: str = DEFAULT_BOARD) -> None:
        """The board's own panel, quill-emu's default, draws every confirmation (--display=none:
        a blind device)."""
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.datadir = self.workdir / "device"
        self.port_file = self.workdir / "port"
        self.log_path = self.workdir / "quill-emu.log"
        self.args = [str(VENV_BIN / "quill-emu"), f"--port-file={self.port_file}",
                     f"--datadir={self.datadir}", f"--board={board}", *args]
        self.board = board
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = ""

    def start(self) -> EmulatedDevice:
        if not any(a.startswith("--firmware=") for a in self.args):
            boards.ready(self.board)
        self.port_file.unlink(missing_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 90     # a loaded machine (the suite, other engineers)
        while time.monotonic() < deadline:
            if self.port_file.exists() and self.port_file.read_text().strip():
                self.port = self.port_file.read_text().strip()
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"quill-emu exited: {self.log_path.read_text()}")
            time.sleep(0.05)
        raise RuntimeError("quill-emu wrote no port file")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def __enter__(self) -> EmulatedDevice:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def process_command_lines() -> list[str]:
    """Every process's command line, as `ps` shows them."""
    lines = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                raw = Path("/proc", entry, "cmdline").read_bytes()
            except OSError:
                continue
            lines.append(raw.replace(b"\0", b" ").decode(errors="replace"))
    return lines
