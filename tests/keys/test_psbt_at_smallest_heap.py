"""A 500-input P2WPKH PSBT signs on the emulated device at the smallest board's heap
(97K, the firmware frozen as that board runs it: tests/keys/emulated.py), driven as
`quill-signer signtx` drives it, and every signature is the one Bitcoin Core makes for
the same PSBT with the mnemonic's tprv (`descriptorprocesspsbt`). The same PSBT as
BIP370 version 2 gets the same signatures. The second session leaves the device's
heap as the first left it (debug_heap): only the buffers made once at the first
session (SPEC §10) stay between sessions. The display is on (the pyboard's SSD1306 panel,
issue 26): before each session's first signature the review is drawn, and it shows the
recipient, the change as change and the fee."""
from __future__ import annotations

from pathlib import Path

from quill.device.client import DeviceClient
from quill.emulator import models
from quill.signing.psbt_own_keys import sign_psbt_with_device
from quill.tx.psbt import PSBT, decode_base64_psbt, encode_base64_psbt
from tests.keys.emulated import SMALLEST_BOARD, TEST_MNEMONIC, EmulatedDevice
from tests.keys.p2wpkh_psbt import AMOUNT, CHANGE, FEE, FINGERPRINT, p2wpkh_psbt
from tests.keys.test_core_external_signer import master_tprv
from tests.kit.bitcoind import BitcoinD
from tests.ui.screenkit import lines, png_size, screens

INPUTS = 500


def _cores_signatures(core: BitcoinD, psbt: PSBT) -> list[dict[bytes, bytes]]:
    desc = f"wpkh({master_tprv(TEST_MNEMONIC)}/84h/1h/0h/0/*)"
    desc += "#" + core.rpc("getdescriptorinfo", desc)["checksum"]
    signed = core.rpc("descriptorprocesspsbt", encode_base64_psbt(psbt),
                      [{"desc": desc, "range": [0, INPUTS - 1]}], "ALL", True, False)
    return [txin.partial_sigs for txin in decode_base64_psbt(signed["psbt"]).inputs]


def test_a_500_input_p2wpkh_psbt_signs_at_the_smallest_heap_as_core_signs_it(tmp_path: Path) -> None:
    assert models.load(SMALLEST_BOARD).heap == 97 * 1024
    screen_dir = tmp_path / "screens"
    with EmulatedDevice(tmp_path / "emu", f"--test-mnemonic={TEST_MNEMONIC}", "--display=ssd1306-128x64",
                        f"--screen-dir={screen_dir}", board=SMALLEST_BOARD) as device, \
            DeviceClient(device.port, short_timeout=60) as client:   # a loaded machine (the suite)
        info = client.get_info()
        signed, heaps = {}, []
        for version in (0, 2):
            psbt = p2wpkh_psbt(INPUTS, version)
            assert sign_psbt_with_device(client, info, psbt, FINGERPRINT, "regtest") == INPUTS
            heaps.append(client.call("debug_heap"))
            signed[version] = psbt
    assert heaps[1][0] >= heaps[0][0] - 256, heaps
    reviews = screens(screen_dir, "review")
    assert reviews and png_size(reviews[0].with_suffix(".png")) == (128, 64)
    text = lines(reviews[-1])
    sent = INPUTS * AMOUNT - FEE - CHANGE       # to 0 <20 zero bytes>, Core's address for it below
    assert text[1] == "Output 1 of 2: bcrt1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqdku202 %d.%08d BTC" % divmod(
        sent, 100_000_000)
    assert text[2].startswith("Change 2 of 2: bcrt1q") and text[2].endswith(" 0.%08d BTC" % CHANGE)
    assert text[3] == f"Fee: 0.{FEE:08d} BTC"
    theirs = p2wpkh_psbt(INPUTS)
    with BitcoinD(tmp_path / "core") as core:
        expected = _cores_signatures(core, theirs)
        decoded = core.rpc("decodepsbt", encode_base64_psbt(theirs))
    assert decoded["tx"]["vout"][0]["scriptPubKey"]["address"] in text[1]
    assert all(len(sigs) == 1 for sigs in expected)
    assert [txin.partial_sigs for txin in signed[0].inputs] == expected
    assert [txin.partial_sigs for txin in signed[2].inputs] == expected
    assert signed[2].psbt_version == 2
