"""`make screens` (issue 26): every flow that asks the user, driven through quill-emu's
debug link on each panel, draws its screens into a folder with an index.html; the
deterministic screens equal tests/ui/fixtures/screens.json (text exactly, picture by
SHA-256), a differing one fails the run, and the README's pictures are the fixtures'."""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

from quill.emulator import gallery
from tests.ui.screenkit import png_size

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "ui" / "fixtures" / "screens.json"
KINDS = {"address", "error", "review", "multisig", "policy", "wipe", "seed-words", "seed-check", "pin"}


def test_make_screens_draws_every_flow_on_every_panel_as_the_fixtures() -> None:
    # the README's command, as it is (its folder, build/screens, is outside git)
    out = REPO / "build" / "screens"
    proc = subprocess.run(["make", "-s", "screens"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    index = (out / "index.html").read_text()
    for panel in gallery.PANELS:
        pictures = sorted((out / panel).glob("*.png"))
        assert {p.stem[7:] for p in pictures} == KINDS, panel
        assert all(f"{panel}/{p.name}" in index for p in pictures)


def test_a_differing_screen_is_reported() -> None:
    expected = json.loads(FIXTURES.read_text())
    found = json.loads(FIXTURES.read_text())
    panel = sorted(found)[0]
    name = sorted(found[panel])[0]
    found[panel][name]["sha256"] = "0" * 64
    found[panel][name + "x"] = found[panel].pop(sorted(found[panel])[-1])
    problems = gallery.compare(found, expected)
    assert f"{panel}/{name}: picture differs" in problems
    assert any(p.endswith(": new") for p in problems) and any(p.endswith(": missing") for p in problems)


def test_the_readmes_pictures_are_the_fixtures() -> None:
    table = json.loads(FIXTURES.read_text())
    hashes = {entry["sha256"] for panel in table.values() for entry in panel.values()}
    pictures = {(doc.parent / target).resolve().relative_to(REPO)
                for doc in (REPO / "README.md", REPO / "docs" / "device.md")
                for target in re.findall(r"\]\(((?:docs/)?screens/[^)]+\.png)\)", doc.read_text())}
    assert len(pictures) >= 3
    for picture in pictures:
        if "seed" in picture.name:  # random words: a picture of the panel's size
            assert png_size(REPO / picture) == (240, 240)
            continue
        assert hashlib.sha256((REPO / picture).read_bytes()).hexdigest() in hashes, picture
