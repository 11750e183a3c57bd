"""quill-emu --approve=ask: the emulated device's user, asked on quill-emu's
controlling terminal (/dev/tty), never on the protocol's pty.

The firmware's ChannelApprover (firmware/emulator_approval.py) writes
<datadir>/confirm-request while it waits; this thread shows that prompt on the
terminal, reads y/n and writes <datadir>/confirm-answer. An answer typed after
the device gave up waiting is removed unread by the next confirmation.
"""
import os
import threading
from pathlib import Path

REQUEST = "confirm-request"
ANSWER = "confirm-answer"
_POLL_S = 0.05


class NoTerminal(Exception):
    pass


def write_answer(directory, answer):
    """Answer a waiting confirmation: 'approve' or 'refuse' (atomically)."""
    if answer not in ("approve", "refuse"):
        raise ValueError(f"answer must be approve or refuse, not {answer!r}")
    directory = Path(directory)
    tmp = directory / (ANSWER + ".tmp")
    tmp.write_text(answer + "\n")
    os.replace(tmp, directory / ANSWER)


class TerminalAsker:
    def __init__(self, directory, tty="/dev/tty"):
        self.directory = Path(directory)
        try:
            self._fd = os.open(tty, os.O_RDWR | os.O_NOCTTY)
        except OSError as e:
            raise NoTerminal(f"--approve=ask needs a terminal ({tty}: {e.strerror})") from None
        self._lines = open(self._fd, "r", closefd=False)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="quill-emu-ask", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()

    def _say(self, text):
        os.write(self._fd, text.encode())

    def _pending(self):
        """(identity, prompt) of a waiting request, or None."""
        path = self.directory / REQUEST
        try:
            st = path.stat()
            return (st.st_ino, st.st_mtime_ns), path.read_text().strip()
        except OSError:
            return None

    def _run(self):
        answered = None
        while not self._stop.wait(_POLL_S):
            pending = self._pending()
            if pending is None or pending[0] == answered:
                continue
            identity, prompt = pending
            self._say(f"\nquill-emu: {prompt} [y/N] ")
            line = self._lines.readline()
            answer = "approve" if line.strip().lower() in ("y", "yes") else "refuse"
            write_answer(self.directory, answer)
            self._say(f"quill-emu: {answer}d\n")
            answered = identity
