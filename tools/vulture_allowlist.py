"""Names vulture (the dead-code check in `make lint`) must not report: intentional public API.

Each entry says why it stays although nothing in the repository reads it yet.
"""
# ruff: noqa: B018, F821
# Core's tables, kept whole so that they can be compared with Core's headers line by line:
RPC_INVALID_PARAMS  # rpc/protocol.h
RPC_DATABASE_ERROR
RPC_METHOD_DEPRECATED
RPC_CLIENT_IN_INITIAL_DOWNLOAD
RPC_WALLET_INSUFFICIENT_FUNDS
RPC_WALLET_ALREADY_EXISTS
OP_VER  # script/script.h opcodes
OP_CAT
OP_RIGHT
OP_INVERT
OP_XOR
OP_RESERVED1
OP_RESERVED2
OP_2MUL
OP_2DIV
OP_MUL
OP_RSHIFT
OP_INVALIDOPCODE
SCRIPT_VERIFY_NONE  # script/interpreter.h
SIGHASH_NONE  # script/interpreter.h
REASON_EXPIRY  # MemPoolRemovalReason
REASON_REPLACED
# Core's UniValue getters, for handlers (rpc/args.py is their one home):
get_array
get_obj
# The chain's listener API is symmetric: a listener that subscribes can leave.
unsubscribe
# Marks the options that carry secrets (-rpcpassword, -rpcauth, -chainsource).
sensitive
# Handlers unpack all of Core's positional parameters by name, also the ones Quill ignores.
include_watchonly
avoid_reuse
# A board's description (boards/boardspec.py), shown in boards/README.md's table and kept with its build data.
title
mcu
micropython_firmware
notes
# Fakes in tests/ implementing interfaces only the firmware calls (vulture does not read the firmware):
pressed  # FakeButton (test_confirm): quillfw.signing.approvers calls button.pressed()
on  # FakeLed (test_confirm): quillfw.signing.approvers calls led.on()
read_into  # FakeTransport (wire_vectors): quillfw.wire.server reads through transport.read_into()
_h  # test_sighash_legacy taps LegacyHasher's internal hash object to see the bytes it hashes
# tests.kit API for the tests being written against the real Bitcoin Core and toolchains:
url_for_follower  # BitcoinD: the URL quilld -chainsource= takes (follower tests)
micropython_source_archive  # toolchains: MicroPython's source, for native-module builds
secp256k1_source_archive  # toolchains: libsecp256k1's source, for the native backend
# http.server's handler protocol (tests/follow/corekit.py's SourceGate).
protocol_version
log_message
do_POST
daemon_threads
# Callbacks that asyncio (Protocol) and httptools (HttpRequestParser) call by name (rpc/server.py):
connection_made
connection_lost
data_received
pause_writing
resume_writing
on_message_begin
on_url
on_header
on_headers_complete
on_body
on_message_complete
SubmittedChain  # tests/follow/corekit.py: the 20,000-block chain of tests/bench/bench_follow.py (bench is not scanned)
mcu_emulator  # tests/device fixture, requested by name (request.getfixturevalue) for the Cortex-M0+ runs
discard_psbts  # tests/clients/specter_driver.py: an operation the Specter test sends by name over the driver's stdin
sign_and_send  # tests/clients/specter_driver.py: an operation the Specter test sends by name over the driver's stdin
send_signed  # tests/clients/specter_driver.py: an operation the Specter tests send by name over the driver's stdin
wallet_info  # tests/clients/specter_driver.py: likewise
attach  # tests/clients/specter_driver.py: likewise
binary_location  # tests/clients/test_specter_browser.py: Selenium's Options reads it (the Chromium binary)
writeto  # tests/ui/test_panel_drivers.py: the recorded I2C bus that quillfw.ui.ssd1306 writes to
# pytest's names, which pytest reads: a hook in tests/conftest.py, a module's marks
pytest_runtest_setup
pytestmark
# quill.compiled._SourceFinder: the import system calls it (a meta path finder)
find_spec
