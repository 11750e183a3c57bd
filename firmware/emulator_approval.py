"""The emulator's approvers (quill-emu --approve=auto|ask|channel). EMULATOR ONLY:
this module lives outside the quillfw package, so no board's build, deploy list
or freeze manifest contains it (tests/boards checks that).

    auto      every confirmation is approved at once (decided in quillfw.signing.confirm,
              which imports nothing for it: no heap taken while signing)
    channel   a test answers through two files in the emulator's data dir
              (the test-only approval channel), or presses the buttons with
              the debug link (emulator_debuglink.debug_press)
    ask       the same files; quill-emu itself answers, after asking y/n on
              its controlling terminal (quill.emulator.asker)

One class for ask and channel (EmulatorApprover), imported only while a
confirmation waits: main_emulator.py passes the approver spec (kind, "emulator_approval",
datadir) (quillfw.signing.confirm), and `approver` below builds it.

The channel, in <datadir>:

    confirm-request   written (atomically) by the firmware when it starts waiting:
                      one line, the prompt; removed when the wait ends
    confirm-answer    written by the answerer: "approve" or "refuse"; read and
                      removed by the firmware (anything else is left
                      alone and read again). One left over from before the
                      wait is removed unread when the wait starts, so nothing
                      can approve in advance.
"""
import os

from quillfw.signing.confirm import APPROVED, REFUSED

REQUEST = "confirm-request"
ANSWER = "confirm-answer"


def _debuglink():
    """The debug link's module when a test used it (debug_press loads it), else None:
    not imported here, so that a wait without it costs no heap."""
    import sys
    return sys.modules.get("emulator_debuglink")


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


class EmulatorApprover:
    """kind "ask" or "channel": the answers come through the files; directory None (a
    qemu board, which has no filesystem): channel, by the debug link's presses only."""

    def __init__(self, kind, directory):
        self.name = kind
        self.request = self.answer = None
        if directory is not None:
            self.request = directory + "/" + REQUEST
            self.answer = directory + "/" + ANSWER

    def begin(self, prompt, now_ms):
        link = _debuglink()
        if link is not None:
            del link.PRESSES[:]     # presses from before the wait do not count
        if self.request is None:
            return
        _remove(self.answer)
        tmp = self.request + ".tmp"
        with open(tmp, "w") as f:
            if isinstance(prompt, str):
                f.write(prompt)
            elif prompt.private:
                f.write(prompt.title + "?")
            else:
                # a Screen (a device with a display): Screen.prompt()'s line, written a part at
                # a time (whole, a review's is a kilobyte in one block), with no new names (the
                # qstrs this module brings are interned amid a signing session)
                from quillfw.ui.screen import plain
                for i, item in enumerate(prompt.items):
                    for j, part in enumerate(item):
                        f.write(" " if j else "; " if i else "")
                        f.write(plain(part))
                f.write("?")
            f.write("\n")
        os.rename(tmp, self.request)

    def poll(self, now_ms):
        link = _debuglink()
        press = None if link is None else link.take_press()
        if press is not None or self.answer is None:
            return press
        try:
            with open(self.answer) as f:
                text = f.read().strip()
        except OSError:
            return None
        if text not in (APPROVED, REFUSED):
            return None         # still being written (or garbage): look again
        _remove(self.answer)
        return text

    def end(self):
        if self.request is not None:
            _remove(self.request)


def approver(kind, directory):
    """The approver of the spec (kind, "emulator_approval", datadir)."""
    return EmulatorApprover(kind, directory)
