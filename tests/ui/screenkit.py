"""Reading the screens an emulated device drew (quill-emu --screen-dir, quilld
-emuscreen): DIR/<6-digit sequence>-<screen>.png and .txt, in drawing order."""
from __future__ import annotations

import struct
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from quill.device.client import DeviceClient
from quill.device.errors import DeviceError

NAME_CHARS = 7      # "000001-"


def screens(folder: Path, name: str | None = None) -> list[Path]:
    """The .txt files of the screens drawn, in order (of one kind when name is given)."""
    found = sorted(p for p in Path(folder).glob("[0-9]" * 6 + "-*.txt"))
    return [p for p in found if name is None or p.stem[NAME_CHARS:] == name]


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def wait_screens(folder: Path, name: str, count: int = 1, timeout: float = 30.0) -> list[Path]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = screens(folder, name)
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no {name} screen in {folder}: {[p.name for p in screens(folder)]}")


def wait_layout(client: DeviceClient, page: int, name: str | None = None,
                timeout: float = 30.0) -> dict[str, Any]:
    """The debug link's layout once the device shows `page` (of screen `name`) and waits for
    its user: the page is drawn before the request says it awaits the user."""
    deadline = time.monotonic() + timeout
    layout = None
    while time.monotonic() < deadline:
        layout = client.out_of_band("debug_layout")
        if (layout and layout["lines"] and layout["page"] == page
                and name in (None, layout["name"]) and client.ping() == "awaiting_user"):
            return layout
        time.sleep(0.05)
    raise AssertionError(f"the device shows no {name or 'screen'} page {page}: {layout}")


def press(client: DeviceClient, button: str) -> None:
    assert client.out_of_band("debug_press", {"button": button}) is None


class AwaitingUser:
    """A call that waits for the device's user, made on a thread while the test presses its
    buttons through the debug link: .result or .error once joined."""

    def __init__(self, client: DeviceClient, method: str, params: dict[str, Any] | None = None) -> None:
        self.result: Any = None
        self.error: DeviceError | None = None
        self.thread = threading.Thread(target=self._run, args=(client, method, params))
        self.thread.start()

    def _run(self, client: DeviceClient, method: str, params: dict[str, Any] | None) -> None:
        try:
            self.result = client.call(method, params, awaits_user=True)
        except DeviceError as e:
            self.error = e

    def join(self, timeout: float = 30.0) -> AwaitingUser:
        self.thread.join(timeout)
        assert not self.thread.is_alive()
        return self


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG, after checking its signature, chunks' CRCs and that its
    image data inflates to one filter byte and the bits of each row (1-bit palette)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (1, 3) and len(chunks[b"PLTE"]) == 6 and b"IEND" in chunks
    assert len(zlib.decompress(chunks[b"IDAT"])) == height * (1 + (width + 7) // 8)
    return width, height


def prompt_items(prompt: str) -> list[str]:
    """A confirmation's one-line prompt (the emulator's confirm-request) as the screen's
    items: quillfw.ui.screen.Screen.prompt joins them with '; ' and ends with '?'."""
    assert prompt.endswith("?"), prompt
    return prompt[:-1].split("; ")


def expected_outputs(decoded: dict) -> list[str]:
    """The review's output lines for Core's decodepsbt of a PSBT: each output's address (or
    OP_RETURN and its data, or its script) and amount as Core writes them; an output is
    change when the PSBT gives its key's derivation (the device derives and checks it)."""
    if "tx" in decoded:     # BIP174; BIP370 (version 2) puts each output's amount and script in outputs
        vout = [(out["n"], out["value"], out["scriptPubKey"]) for out in decoded["tx"]["vout"]]
    else:
        vout = [(n, meta["amount"], meta["script"]) for n, meta in enumerate(decoded["outputs"])]
    want = []
    for (n, value, spk), meta in zip(vout, decoded["outputs"], strict=True):
        if "address" in spk:
            where = spk["address"]
        elif spk["type"] == "nulldata":
            where = "OP_RETURN " + spk["hex"][4:]
        else:
            where = "Script " + spk["hex"]
        kind = "Change" if meta.get("bip32_derivs") or meta.get("taproot_bip32_derivs") else "Output"
        want.append(f"{kind} {n + 1} of {len(vout)}: {where} {value:.8f} BTC")
    return want
