"""The BIP341 key-path vectors signed by the device through the protocol:
every input of the vector transaction, with its merkle root and hash type,
aux randomness = 32 zero bytes (the device default, as Core signs), must give
exactly the vector's witness signature."""
import pytest

from quill.device.client import DeviceClient
from quill.emulator.launcher import Emulator
from quill.tx.transaction import Transaction
from tests.kit.boards import DEFAULT_BOARD
from tests.kit.vectors import load_json

SIGHASH_SINGLE = 3
SIGHASH_ANYONECANPAY = 0x80


@pytest.fixture(scope="module")
def device():
    with Emulator(board=DEFAULT_BOARD) as emu, DeviceClient(emu.port) as client:
        yield client


def test_every_key_path_vector_reproduces_through_the_protocol(device):
    case = load_json("core/bip341_wallet_vectors.json")["keyPathSpending"][0]
    tx = Transaction.from_hex(case["given"]["rawUnsignedTx"])
    spent = case["given"]["utxosSpent"]
    inputs = [[i.prevout.hash, i.prevout.n, i.sequence, u["amountSats"], bytes.fromhex(u["scriptPubKey"])]
              for i, u in zip(tx.vin, spent, strict=True)]
    outputs = [[o.value, o.script_pubkey] for o in tx.vout]
    vectors = case["inputSpending"]

    with device.session():
        device.call("sign_begin", {"version": tx.version, "locktime": tx.locktime, "n_inputs": len(inputs),
                                   "n_outputs": len(outputs), "algorithms": ["taproot"]})
        try:
            keys = [device.call("sign_add_key", {"secret": bytes.fromhex(v["given"]["internalPrivkey"]),
                                                 "compressed": True}) for v in vectors]
            tokens_in = device.call("sign_add_inputs", {"inputs": inputs})
            tokens_out = device.call("sign_add_outputs", {"outputs": outputs})
            for v, key_index in zip(vectors, keys, strict=True):
                given = v["given"]
                i, hash_type = given["txinIndex"], given["hashType"]
                params = {"input_index": i, "hash_type": hash_type, "key_index": key_index, "tweak": True}
                if given["merkleRoot"] is not None:
                    params["merkle_root"] = bytes.fromhex(given["merkleRoot"])
                if hash_type & SIGHASH_ANYONECANPAY:
                    params.update(txin=inputs[i], txin_token=tokens_in[i])
                if hash_type & 0x1F == SIGHASH_SINGLE:
                    params.update(txout=outputs[i], txout_token=tokens_out[i])
                signature = device.call("sign_taproot", params, awaits_user=True)
                assert signature.hex() == v["expected"]["witness"][0], f"input {i}"
        finally:
            device.call("sign_end")
