"""Mining RPCs on the built-in regtest chain (Core's rpc/mining.cpp): generatetoaddress, generateblock,
submitblock."""
from quill.chain import miner
from quill.chain.block import Block
from quill.chain.rules import Invalid
from quill.rpc.args import UINT64, get_int, optional
from quill.rpc.errors import (
    RPC_DESERIALIZATION_ERROR,
    RPC_INTERNAL_ERROR,
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_TYPE_ERROR,
    RPC_VERIFY_ERROR,
    RPCError,
)
from quill.rpc.registry import ARR, BOOL, HIDDEN, NUM, STR, STR_HEX, Method, Param
from quill.tx.address import AddressError, decode_destination
from quill.tx.decode import TxDecodeError, decode_hex_tx, parse_hex
from quill.tx.descriptor import descriptor_checksum
from quill.tx.hashes import hash_to_hex
from quill.tx.serialize import DeserializationError

from .blockchain import chain_of

DEFAULT_MAX_TRIES = 1_000_000


def _address_script(text, chain_name):
    try:
        return decode_destination(text, chain_name)
    except AddressError:
        return None


def _descriptor_script(text, chain_name):
    """The script of an `addr(...)` or `raw(...)` descriptor (checksum optional), else None."""
    body, _, checksum = text.partition("#")
    if checksum and descriptor_checksum(body) != checksum:
        return None
    if body.startswith("addr(") and body.endswith(")"):
        return _address_script(body[5:-1], chain_name)
    if body.startswith("raw(") and body.endswith(")"):
        return parse_hex(body[4:-1])
    return None


def generatetoaddress(ctx, args):
    chain = chain_of(ctx)
    nblocks = get_int(args[0])
    max_tries = optional(args[2], lambda v: get_int(v, UINT64), DEFAULT_MAX_TRIES)
    script = _address_script(args[1], ctx.node.chain_name)
    if script is None:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Error: Invalid address")
    try:
        hashes = chain.generate(script, max(0, nblocks), max_tries)
    except Invalid:
        raise RPCError(RPC_INTERNAL_ERROR, "ProcessNewBlock, block not accepted") from None
    return [hash_to_hex(h) for h in hashes]


def generateblock(ctx, args):
    chain = chain_of(ctx)
    output, raw_txs, submit = args[0], args[1], True if args[2] is None else args[2]
    chain_name = ctx.node.chain_name
    script = _descriptor_script(output, chain_name)
    if script is None:
        script = _address_script(output, chain_name)
    if script is None:
        raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Error: Invalid address or descriptor")
    with chain.lock:
        txs = []
        for item in raw_txs:
            if not isinstance(item, str):
                raise RPCError(RPC_TYPE_ERROR, "JSON value is not a string as expected")
            txid = parse_hex(item) if len(item) == 64 else None
            if txid is not None:
                entry = chain.mempool_entry(txid[::-1])
                if entry is None:
                    raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, f"Transaction {item} not in mempool.")
                txs.append(entry.tx)
                continue
            try:
                txs.append(decode_hex_tx(item))
            except TxDecodeError:
                raise RPCError(RPC_DESERIALIZATION_ERROR, f"Transaction decode failed for {item}. "
                                                          "Make sure the tx has at least one input.") from None
        try:
            block = chain.generate_block(script, txs, submit)
        except Invalid as e:
            raise RPCError(RPC_VERIFY_ERROR, f"TestBlockValidity failed: {e}") from None
    out = {"hash": hash_to_hex(block.hash())}
    if not submit:
        out["hex"] = block.serialize().hex()
    return out


def submitblock(ctx, args):
    chain = chain_of(ctx)
    data = parse_hex(args[0])
    try:
        if data is None:
            raise DeserializationError("not hex")
        block = Block.from_bytes(data, allow_trailing=True)
    except DeserializationError:
        raise RPCError(RPC_DESERIALIZATION_ERROR, "Block decode failed") from None
    if not block.txs or not block.txs[0].is_coinbase():
        raise RPCError(RPC_DESERIALIZATION_ERROR, "Block does not start with a coinbase")
    miner.update_uncommitted_block_structures(block)
    return chain.submit_block(block)


METHODS = [
    Method("generatetoaddress", HIDDEN, generatetoaddress,
           [Param("nblocks", NUM, True),
            Param("address", STR, True),
            Param("maxtries", NUM, False)]),
    Method("generateblock", HIDDEN, generateblock,
           [Param("output", STR, True),
            Param("transactions", ARR, True),
            Param("submit", BOOL, False)]),
    Method("submitblock", "mining", submitblock,
           [Param("hexdata", STR_HEX, True),
            Param("dummy", STR, False)]),
]
