"""Names in tests/ that vulture (the dead-code check in `make lint`) must not report.

vulture reads host/, tests/, tools/ and boards/, not the firmware: the fakes below
implement interfaces that only firmware code calls. Nothing imports this file.
"""
# A list of names, as vulture's allow-lists are: never run, so names need not resolve
# and bare expressions are the point.
# ruff: noqa: B018, F821
pressed  # FakeButton (test_confirm): quillfw.signing.approvers calls button.pressed()
on  # FakeLed (test_confirm): quillfw.signing.approvers calls led.on()
read_into  # FakeTransport (wire_vectors): quillfw.wire.server reads through transport.read_into()
_h  # test_sighash_legacy taps LegacyHasher's internal hash object to see the bytes it hashes
# tests.kit API for the tests being written against the real Bitcoin Core and toolchains:
url_for_follower  # BitcoinD: the URL quilld -chainsource= takes (follower tests)
micropython_source_archive  # toolchains: MicroPython's source, for native-module builds
secp256k1_source_archive  # toolchains: libsecp256k1's source, for the native backend
