"""quill-emu's test seed never reaches a real board: the emulator-only module
that answers the key methods from the state directory (firmware/emulator_keys.py)
and the --test-mnemonic provisioning are outside the quillfw package that every
build compiles, and no board build or deploy list contains them; every real
board registers the key methods with its own seed file."""
import pytest

from boards import boardspec, build

REAL_BOARDS = [n for n in boardspec.names() if n != "unix"]
EMULATOR_ONLY = "emulator_keys"


def test_the_emulator_keys_module_is_outside_the_firmware_package():
    assert (boardspec.FIRMWARE_DIR / f"{EMULATOR_ONLY}.py").is_file()
    assert EMULATOR_ONLY not in {p.stem for p in build.firmware_sources()}
    for source in build.firmware_sources():
        text = source.read_text()
        assert EMULATOR_ONLY not in text and "test_mnemonic" not in text, source


@pytest.mark.parametrize("name", REAL_BOARDS)
def test_no_build_contains_it_and_every_board_registers_its_keys(builds, name):
    out = builds[name]
    files = out.modules + out.entry_points + out.files_on_filesystem()
    assert files and not [p for p in files if EMULATOR_ONLY in p.name]
    main = next(p for p in out.entry_points if p.name == "main.py").read_text()
    assert "register_keys(dispatcher, SEED_FILE)" in main
