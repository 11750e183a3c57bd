"""mpy-cross compiles every firmware module for every board's architecture, the
result fits each board's flash budget, and deploy assembles the right mpremote
commands (the copy itself needs a board: boards/README.md)."""
import dataclasses
import subprocess
import sys

import pytest

from boards import boardspec, build
from tests.boards.boardtest import REPO

BOARDS = boardspec.names()
SOURCES = sorted(p.relative_to(boardspec.FIRMWARE_DIR).with_suffix("").as_posix()
                 for p in build.firmware_sources())
THUMB = "quillfw/crypto/secp256k1_thumb"
# .mpy header byte 2 (MicroPython docs, .mpy files): architecture << 2 | sub-version;
# 0 = bytecode only
MPY_ARCH = {"armv6m": 4, "armv7m": 5, "armv7em": 6, "armv7emsp": 7, "armv7emdp": 8}


def is_arm(name):
    return boardspec.load(name).mpy_cross_march in build.THUMB_MARCHES


@pytest.mark.parametrize("name", BOARDS)
def test_every_firmware_module_is_compiled(builds, name):
    """Every module, the Thumb arithmetic only for an ARM board."""
    out = builds[name]
    expected = [s for s in SOURCES if s != THUMB or is_arm(name)]
    assert sorted(p.relative_to(out.root).with_suffix("").as_posix() for p in out.modules) == expected
    assert "quillfw/board/selftest" in SOURCES and "quillfw/crypto/secp256k1_gtable" in SOURCES
    assert THUMB in SOURCES
    assert [p.name for p in out.entry_points][-1] == "main.py"


@pytest.mark.parametrize("name", BOARDS)
def test_mpy_files_are_bytecode_only_v6_but_the_thumb_arithmetic(builds, name):
    """Header "M", version 6, flags 0: no native code, so no architecture (the same
    files load on the unix port), except the Thumb arithmetic, native code for the
    board's own architecture."""
    board = boardspec.load(name)
    for path in builds[name].modules:
        if path.relative_to(builds[name].root).with_suffix("").as_posix() == THUMB:
            header = path.read_bytes()[:3]
            assert header[:2] == b"M\x06" and header[2] >> 2 == MPY_ARCH[board.mpy_cross_march], header
        else:
            assert path.read_bytes()[:3] == b"M\x06\x00", path.name


@pytest.mark.parametrize("name", BOARDS)
def test_firmware_fits_the_board_flash_budget(builds, name):
    out = builds[name]
    print("\n" + build.format_table(build.size_rows([out])))
    assert out.fits(), (out.flash_bytes(), out.board.flash_budget_bytes)


def test_filesystem_size_counts_whole_blocks(builds):
    out = builds["rpi_pico"]
    assert out.flash_bytes() % out.board.fs_block_bytes == 0
    assert out.flash_bytes() >= out.mpy_bytes + len(out.modules) * 1  # never less than the bytes
    frozen = builds["pyboard"]
    assert frozen.flash_bytes() == frozen.mpy_bytes
    assert [p.name for p in frozen.files_on_filesystem()] == ["boot.py", "main.py"]


def test_check_command_prints_the_table_and_passes():
    proc = subprocess.run([sys.executable, "-m", "boards.build", "check"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = {cells[0]: cells for cells in ([c.strip() for c in line.split("|")]
                                          for line in proc.stdout.splitlines()[2:])}
    for name in BOARDS:
        assert rows[name][8] == "yes", proc.stdout            # the "fits" column
    # the native module's columns: its .mpy and RAM where built, "-" for a board without one
    assert rows["esp32_s3"][9:] == ["-", "-"], proc.stdout


def test_a_board_over_budget_fails_check_and_is_not_deployed(builds):
    out = builds["rpi_pico"]
    tight = build.BuildOutput(dataclasses.replace(out.board, flash_budget_bytes=4096), out.root,
                              out.modules, out.entry_points)
    assert not tight.fits()
    assert build.size_rows([tight])[0][8] == "NO"
    with pytest.raises(build.BuildError, match="exceed the flash budget"):
        build.deploy(tight, dry_run=True, log=lambda line: None)


def _dry_run(out, port="auto"):
    lines = []
    build.deploy(out, port, dry_run=True, log=lines.append)
    assert len(lines) == 1
    return lines[0]


def test_deploy_to_a_filesystem_board_copies_the_package_then_the_entry_points(builds):
    out = builds["rpi_pico"]
    command = _dry_run(out, "/dev/ttyACM0")
    assert "connect /dev/ttyACM0 exec <script>" in command
    copy_package = f"fs cp -r {out.root / 'quillfw'} :"
    assert copy_package in command
    assert command.index(copy_package) < command.index(":boot.py") < command.index(":main.py")
    assert command.endswith("+ soft-reset")


def test_deploy_copies_the_native_module_before_main_or_removes_an_old_one(builds, tmp_path):
    out = builds["rpi_pico"]
    assert out.native is None and build.REMOVE_NATIVE.strip() and build.NATIVE_MODULE in build.REMOVE_NATIVE
    assert f":{build.NATIVE_MODULE}" not in _dry_run(out)      # removed by the <script> instead
    module = tmp_path / build.NATIVE_MODULE
    module.write_bytes(b"M" * 5000)
    with_native = dataclasses.replace(out, native=module)
    command = _dry_run(with_native)
    assert command.index(f"fs cp {module} :{build.NATIVE_MODULE}") < command.index(":main.py")
    assert with_native.flash_bytes() == out.flash_bytes() + 2 * out.board.fs_block_bytes


def test_deploy_to_a_frozen_board_copies_only_the_entry_points(builds):
    command = _dry_run(builds["pyboard"])
    assert "quillfw :" not in command and ":main.py" in command


def test_the_emulator_board_is_not_deployed(builds):
    with pytest.raises(build.BuildError, match="quill-emu"):
        _dry_run(builds["unix"])


def test_the_on_board_scripts_compile_for_micropython(tmp_path):
    """The probe and cleanup scripts run on the board; at least they must compile there."""
    for i, script in enumerate((build.PROBE, build.REMOVE_PACKAGE, build.CHECK_FROZEN)):
        src = tmp_path / f"s{i}.py"
        src.write_text(script)
        build.compile_module(src, tmp_path / f"s{i}.mpy", "armv6m")
