"""Every limit the device advertises in get_info holds on the smallest board (the
pyboard's 97K heap, its firmware frozen): a message of exactly max_message_size, a script of exactly max_script_size
in each place a signature reads one, max_inputs inputs, max_outputs outputs and
max_keys keys in one session, each signed on the emulated device and checked
against an independent signer. One byte or one item more is refused by the host
before it sends anything."""
import pytest

from quill.device.client import DeviceClient
from quill.device.codec import MessageTooLarge
from quill.emulator.launcher import Emulator
from quill.signing.device_session import check_device, sign_on_device
from quill.signing.errors import DeviceLimitExceeded
from quill.signing.keystore import Key
from quill.signing.solver import SEGWIT_V0, SignRequest
from quill.tx.transaction import TxOut
from tests.kit import boards
from tests.signing.signkit import KeyPair, core_ecdsa, ecdsa_sighash, keys, p2wpkh, p2wsh, push, unsigned_tx

MARKED = KeyPair(bytes.fromhex("11c0ffee" * 8))
AMOUNT = 9000


@pytest.fixture(scope="module")
def device():
    with Emulator(board=boards.ready(boards.SMALLEST_BOARD)) as emu, DeviceClient(emu.port) as client:
        yield client, client.get_info()


def _script_code(size, pubkey):
    """A witness script of exactly size bytes that pays to pubkey: pushes dropped
    again, padded with OP_NOPs, then <pubkey> OP_CHECKSIG."""
    tail = push(pubkey) + b"\xac"
    body = b""
    while len(body) + 77 + len(tail) <= size:
        body += push(bytes(75)) + b"\x75"          # <75 bytes> OP_DROP
    return body + b"\x61" * (size - len(body) - len(tail)) + tail


def _sign_v0(client, info, tx, spent, script_code, indices, hash_type=1, key=MARKED):
    """Sign inputs `indices` (BIP143 over script_code) and check every signature
    against Core's procedure (coincurve) over bitcointx's sighash."""
    requests = [SignRequest(i, SEGWIT_V0, Key(key.secret, True), script_code) for i in indices]
    signatures = sign_on_device(client, info, tx, spent, requests, hash_type)
    for r in requests:
        want = core_ecdsa(key.secret, ecdsa_sighash(tx, r.input_index, script_code, hash_type,
                                                     spent[r.input_index].value), hash_type)
        assert signatures[r.ident()] == want
    return signatures


def test_a_message_of_exactly_max_message_size_is_read_and_answered(device):
    client, info = device
    size = info["max_message_size"]
    n = size
    while True:     # the host refuses a larger message before sending it: shrink to fit
        data = bytes(i % 251 for i in range(n))
        try:
            echoed = client.call("debug_echo", {"data": data})
            break
        except MessageTooLarge:
            n -= 1
    assert n < size and echoed == data   # n + 1 bytes were one byte over: this one is exactly max
    assert client.ping() == "idle"


@pytest.mark.parametrize("place", ["witness script", "output", "spent scriptPubKey"])
def test_a_script_of_exactly_max_script_size_signs(device, place):
    client, info = device
    size = info["limits"]["max_script_size"]
    big = _script_code(size, MARKED.pubkey)
    assert len(big) == size
    tx = unsigned_tx(2, 2, seed=60)
    script_code = push(MARKED.pubkey) + b"\xac"
    spent = [TxOut(AMOUNT, p2wsh(script_code))] * 2
    if place == "witness script":
        script_code, spent = big, [TxOut(AMOUNT, p2wsh(big))] * 2
    elif place == "output":
        tx.vout[1].script_pubkey = big
    else:
        spent = [TxOut(AMOUNT, big), spent[1]]
    for hash_type in (1, 3, 0x81):      # ALL, SINGLE (output 1 is input 1's), ANYONECANPAY
        _sign_v0(client, info, tx, spent, script_code, [0, 1], hash_type)


def test_one_byte_more_than_max_script_size_is_refused_before_sending(device):
    client, info = device
    size = info["limits"]["max_script_size"]
    tx = unsigned_tx(1, 1, seed=61)
    tx.vout[0].script_pubkey = b"\x6a" * (size + 1)
    request = SignRequest(0, SEGWIT_V0, Key(MARKED.secret, True), p2wpkh(MARKED.pubkey))
    with pytest.raises(DeviceLimitExceeded, match=f"larger than the device's limit of {size}"):
        check_device(info, tx, [request], ["p2wpkh"], 1, [TxOut(AMOUNT, p2wpkh(MARKED.pubkey))])
    tx.vout[0].script_pubkey = b"\x6a" * size
    check_device(info, tx, [request], ["p2wpkh"], 1, [TxOut(AMOUNT, p2wpkh(MARKED.pubkey))])


@pytest.mark.slow
def test_max_inputs_and_max_outputs_in_one_session(device):
    client, info = device
    n_in, n_out = info["limits"]["max_inputs"], info["limits"]["max_outputs"]
    tx = unsigned_tx(n_in, n_out, seed=62)
    script_code = push(MARKED.pubkey) + b"\xac"
    spent = [TxOut(AMOUNT + i, p2wsh(script_code)) for i in range(n_in)]
    _sign_v0(client, info, tx, spent, script_code, [0, n_in - 1])
    request = SignRequest(0, SEGWIT_V0, Key(MARKED.secret, True), script_code)
    for more in (unsigned_tx(n_in + 1, 1, seed=63), unsigned_tx(1, n_out + 1, seed=64)):
        with pytest.raises(DeviceLimitExceeded, match="more than the device's limit"):
            check_device(info, more, [request], ["p2wsh"] * len(more.vin), 1)


def test_max_keys_in_one_session(device):
    client, info = device
    n = info["limits"]["max_keys"]
    signers = keys(65, n + 1)
    tx = unsigned_tx(n, 1, seed=65)
    spent = [TxOut(AMOUNT, p2wpkh(k.pubkey)) for k in signers[:n]]
    requests = [SignRequest(i, SEGWIT_V0, Key(k.secret, True), b"\x76\xa9\x14" + p2wpkh(k.pubkey)[2:]
                            + b"\x88\xac") for i, k in enumerate(signers[:n])]
    signatures = sign_on_device(client, info, tx, spent, requests, 1)
    for r, k in zip(requests, signers, strict=False):
        assert signatures[r.ident()] == core_ecdsa(k.secret, ecdsa_sighash(tx, r.input_index, r.script_code, 1,
                                                                           AMOUNT), 1)
    more = unsigned_tx(n + 1, 1, seed=66)
    requests.append(SignRequest(n, SEGWIT_V0, Key(signers[n].secret, True), requests[0].script_code))
    with pytest.raises(DeviceLimitExceeded, match=f"needs {n + 1} keys"):
        check_device(info, more, requests, ["p2wpkh"] * (n + 1), 1)
