"""quill-signer register's descriptor forms (quill.signer.multisig): what the device is sent
for each accepted form, and the clear error for each form it cannot register."""
from __future__ import annotations

import pytest

from quill.signer.multisig import RegistrationError, registration
from quill.tx.descriptor import add_checksum
from tests.keys.emulated import TEST_MNEMONIC
from tests.keys.test_core_external_signer import master_tprv

K1 = ("[73c5da0a/48h/1h/0h/2h]tpubDFH9dgzveyD8zTbPUFuLrGmCydNvxehyNdUXKJAQN8x4aZ4j6UZqGfnqFrD4NqyaTVGKbv"
      "EW54tsvPTK2UoSbCC1PJY8iCNiwTL3RWZEheQ")
K2 = ("[b8688df1/48'/1'/0'/2']tpubDEfobrrtptRTbKf4gysDhoabneABDTAcdj3Vbn4XwPsLE2pmqpizSPRG6zHsbAMuiSgWm"
      "WPsYCLHTKTPpyrGJ5rAoTpKoQNZcxodiPf2tSJ")
K3 = ("[28645006/48h/1h/0h/2h]tpubDEwqCvJxKwKWX9xvRe48uofWJn1Y89Jn8UeH1Efrjb1UEVjUDy3URYTiqWaVCW7Wdv"
      "HrL8XrSihHEhTwv5H3VDJoakjuCHiAnr6xcF2Xm4s")


def keys(suffix: str) -> str:
    return ",".join(k + suffix for k in (K1, K2, K3))


@pytest.mark.parametrize(("descs", "script_type", "is_sorted"), [
    ([add_checksum(f"wsh(sortedmulti(2,{keys('/<0;1>/*')}))")], "p2wsh", True),
    ([f"sh(wsh(multi(2,{keys('/0/*')})))"], "p2sh-p2wsh", False),
    ([f"sh(sortedmulti(2,{keys('/0/*')}))", f"sh(sortedmulti(2,{keys('/1/*')}))"], "p2sh", True),
])
def test_the_forms_the_device_registers(descs: list[str], script_type: str, is_sorted: bool) -> None:
    wallet = registration(descs, "vault", "regtest", "regtest")
    assert (wallet.script_type, wallet.sorted, wallet.threshold) == (script_type, is_sorted, 2)
    assert [(fp.hex(), path) for fp, path, _ in wallet.signers] == [
        ("73c5da0a", "m/48h/1h/0h/2h"), ("b8688df1", "m/48h/1h/0h/2h"), ("28645006", "m/48h/1h/0h/2h")]
    assert wallet.signers[1][2] == K2.split("]")[1]
    assert wallet.params()["signers"][0] == [bytes.fromhex("73c5da0a"), "m/48h/1h/0h/2h", K1.split("]")[1]]


@pytest.mark.parametrize(("descs", "error"), [
    ([f"wsh(sortedmulti(2,{keys('/<0;1>/*')}))#00000000"],
     "Provided checksum '00000000' does not match computed checksum"),
    ([f"wpkh({K1}/0/*)"], "Only sh(multi), wsh(multi), sh(wsh(multi)) and their sortedmulti are registered"),
    ([f"wsh(sortedmulti(2,{keys('/0/*')}))", f"wsh(sortedmulti(2,{keys('/2/*')}))"],
     "The second descriptor must be the first one's change (/1/*)"),
    ([f"wsh(multi(2,{K1}/0/*,{K2}/0/*,{K3.split(']')[1]}/0/*))"],
     "Key 3 must be an xpub with its origin [fingerprint/path]"),
    ([f"wsh(multi(2,{K1}/0/1/*,{K2}/0/*))"], "Key 1 must end with /<0;1>/* or /0/*"),
    ([f"wsh(multi(2,{K1}/0/5,{K2}/0/*))"], "Key 1 must end with /<0;1>/* or /0/*"),
    ([f"wsh(multi(3,{K1}/0/*,{K2}/0/*))"], "Invalid descriptor: Multisig threshold cannot be larger"),
    ([], "Give one descriptor (/<0;1>/* or /0/*) or two (/0/* and /1/*)"),
])
def test_what_the_device_cannot_register_is_a_clear_error(descs: list[str], error: str) -> None:
    with pytest.raises(RegistrationError) as e:
        registration(descs, "vault", "regtest", "regtest")
    assert str(e.value).startswith(error)


def test_a_private_key_is_refused_without_being_quoted() -> None:
    tprv = master_tprv(TEST_MNEMONIC)
    with pytest.raises(RegistrationError) as e:
        registration([f"wsh(multi(2,[73c5da0a]{tprv}/0/*,{K2}/0/*))"], "vault", "regtest", "regtest")
    assert str(e.value) == "Key 1 is a private key: register xpubs only"
    assert "tprv" not in str(e.value)
