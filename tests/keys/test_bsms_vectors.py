"""quill.signer.bsms against BIP129's own test vectors (NO_ENCRYPTION, the mode quill-signer
makes and reads): the digest the device signs is the one the BIP's key records were signed
over (each SIG recovers its KEY's public key), and the BIP's round-2 descriptor record reads
as the descriptor the device registers, with the BIP's first address."""
from __future__ import annotations

import base64

import coincurve
import pytest

from quill.signer import bsms, message
from quill.signer.multisig import registration
from quill.wallet.bip32 import decode_ext_pubkey

# BIP129, "Mode: NO_ENCRYPTION", round 1: the two signers' key records
KEY_RECORDS = [
    "BSMS 1.0\n00\n[1cf0bf7e/48'/0'/0'/2']xpub6FL8FhxNNUVnG64YurPd16AfGyvFLhh7S2uSsDqR3Qfcm6o9jtcMYwh6DvmcBF9qozxNQmTC"
    "VvWtxLpKTnhVLN3Pgnu2D3pAoXYFgVyd8Yz\nSigner 1 key\n"
    "IB7v+qi1b+Xrwm/3bF+Rjl8QbIJ/FMQ40kUsOOQo1SqUWn5QlFWbBD8BKPRetfo1L1N7DmYjVscZNsmMrqRJGWw=",
    "BSMS 1.0\n00\n[4fc1dd4a/48'/0'/0'/2']xpub6EebMbEps7ZcV3FYEnddRsvrFWDrt2tiPmCeM7pPXQEmphvq9ZfJ1LWFUDjf3vxCeBuPrfyG"
    "rMazWUsYsetrnHatQZVLJH7LsgCjtMqdzgj\nSigner 2 key\n"
    "HzUa4Z76PFHMl54flIIF3XKiHZ+KbWjjxCEG5G3ZqZSqTd6OgTiFFLqq9PXJXdfYm6/cnL8IVWQgjFF9DQhIqQs=",
]
# round 2: the coordinator's descriptor record
DESCRIPTOR_RECORD = (
    "BSMS 1.0\nwsh(sortedmulti(2,[1cf0bf7e/48'/0'/0'/2']xpub6FL8FhxNNUVnG64YurPd16AfGyvFLhh7S2uSsDqR3Qfcm6o9jtcMYwh6Dv"
    "mcBF9qozxNQmTCVvWtxLpKTnhVLN3Pgnu2D3pAoXYFgVyd8Yz/**,[4fc1dd4a/48'/0'/0'/2']xpub6EebMbEps7ZcV3FYEnddRsvrFWDrt2ti"
    "PmCeM7pPXQEmphvq9ZfJ1LWFUDjf3vxCeBuPrfyGrMazWUsYsetrnHatQZVLJH7LsgCjtMqdzgj/**))\n/0/*,/1/*\n"
    "bc1qrgc6p3kylfztu06ysl752gwwuekhvtfh9vr7zg43jvu60mutamcsv948ej")


@pytest.mark.parametrize("record", KEY_RECORDS)
def test_the_signed_digest_is_bip129s(record: str) -> None:
    version, token, key, label, signature = record.split("\n")
    compact = base64.b64decode(signature)
    digest = message.message_digest("\n".join((version, token, key, label)))
    recovered = coincurve.PublicKey.from_signature_and_message(
        compact[1:] + bytes(((compact[0] - 27) & 3,)), digest, hasher=None)
    xpub = decode_ext_pubkey(key.split("]")[1], "main")
    assert xpub is not None and recovered.format() == bytes(xpub.pubkey)
    # and the header quill-signer writes for that signature is the BIP's (compressed, legacy)
    assert message.compact_signature(compact[1:], digest, bytes(xpub.pubkey)) == compact


def test_the_descriptor_record_reads_as_bip129_says() -> None:
    body, address = bsms.read_descriptor_record(DESCRIPTOR_RECORD)
    assert body.count("/<0;1>/*") == 2 and "/**" not in body
    assert address == "bc1qrgc6p3kylfztu06ysl752gwwuekhvtfh9vr7zg43jvu60mutamcsv948ej"
    assert bsms.first_address(body, "main") == address
    wallet = registration([body], "bip129", "main", "main")
    assert (wallet.script_type, wallet.sorted, wallet.threshold) == ("p2wsh", True, 2)
    assert [(fp.hex(), path) for fp, path, _ in wallet.signers] == [
        ("1cf0bf7e", "m/48h/0h/0h/2h"), ("4fc1dd4a", "m/48h/0h/0h/2h")]


def test_a_record_of_another_version_or_shape_is_refused() -> None:
    with pytest.raises(bsms.BsmsError, match="Unsupported BSMS version"):
        bsms.read_descriptor_record(DESCRIPTOR_RECORD.replace("BSMS 1.0", "BSMS 2.0"))
    with pytest.raises(bsms.BsmsError, match="four lines"):
        bsms.read_descriptor_record(DESCRIPTOR_RECORD.rsplit("\n", 1)[0])
