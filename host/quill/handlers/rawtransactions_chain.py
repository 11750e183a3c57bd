"""Raw transaction RPCs that need the chain (Core's rpc/rawtransaction.cpp, node/transaction.cpp):
sendrawtransaction and getrawtransaction.

Quill always keeps a transaction index (it is cheap here), so getrawtransaction
finds confirmed transactions without a blockhash, as Core with -txindex=1 does.
"""

from quill.chain.errors import AlreadyInUtxoSet, FeeExceeded
from quill.chain.policy import DEFAULT_MAX_RAW_TX_FEE_RATE, fee_for
from quill.chain.rules import Invalid
from quill.rpc.args import amount_from_value, fee_rate_from_value, parse_hash_v, parse_verbosity
from quill.rpc.errors import (
    RPC_DESERIALIZATION_ERROR,
    RPC_INVALID_ADDRESS_OR_KEY,
    RPC_VERIFY_ALREADY_IN_UTXO_SET,
    RPC_VERIFY_ERROR,
    RPC_VERIFY_REJECTED,
    RPCError,
)
from quill.rpc.registry import AMOUNT, ANY, STR_HEX, Method, Param
from quill.tx import script as S
from quill.tx.decode import TxDecodeError, decode_hex_tx
from quill.tx.hashes import hash_to_hex

from .blockchain import chain_of, tx_with_undo_to_json


def sendrawtransaction(ctx, args):
    chain = chain_of(ctx)
    try:
        tx = decode_hex_tx(args[0])
    except TxDecodeError:
        raise RPCError(RPC_DESERIALIZATION_ERROR, "TX decode failed. Make sure the tx has at least one input.") \
            from None
    max_burn = 0 if args[2] is None else amount_from_value(args[2])
    for out in tx.vout:
        if (S.is_unspendable(out.script_pubkey) or not S.has_valid_ops(out.script_pubkey)) and out.value > max_burn:
            raise RPCError(RPC_VERIFY_ERROR, "Unspendable output exceeds maximum configured by user (maxburnamount)")
    rate = DEFAULT_MAX_RAW_TX_FEE_RATE if args[1] is None else fee_rate_from_value(args[1])
    broadcast(chain, tx, fee_for(rate, tx.vsize()))
    return tx.txid_hex()


def broadcast(chain, tx, max_fee):
    """Core's BroadcastTransaction: into the mempool (and so to the wallets), or Core's error."""
    try:
        chain.broadcast_transaction(tx, max_fee)
    except AlreadyInUtxoSet:
        raise RPCError(RPC_VERIFY_ALREADY_IN_UTXO_SET, "Transaction outputs already in utxo set") from None
    except FeeExceeded:
        raise RPCError(RPC_VERIFY_ERROR, "Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)") \
            from None
    except Invalid as e:
        # Core's HandleATMPError: missing inputs are -25, every other rejection -26; the text is state.ToString().
        raise RPCError(RPC_VERIFY_ERROR if e.missing_inputs else RPC_VERIFY_REJECTED, str(e)) from None


def getrawtransaction(ctx, args):
    chain = chain_of(ctx)
    txid = parse_hash_v(args[0], "parameter 1")
    verbosity = parse_verbosity(args[1], 0)
    block_hash = None if args[2] is None else parse_hash_v(args[2], "parameter 3")
    with chain.lock:
        info = None
        if block_hash is not None:
            info = chain.header_info(block_hash)
            if info is None:
                raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "Block hash not found")
        if txid == chain.genesis_coinbase_txid():
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, "The genesis block coinbase is not considered an ordinary "
                                                       "transaction and cannot be retrieved")
        tx, found_in = chain.find_transaction(txid, block_hash)
        if tx is None:
            message = ("No such transaction found in the provided block" if block_hash is not None
                       else "No such mempool or blockchain transaction")
            raise RPCError(RPC_INVALID_ADDRESS_OR_KEY, message + ". Use gettransaction for wallet transactions.")
        if verbosity <= 0:
            return tx.hex()
        if found_in is not None and info is None:
            info = chain.header_info(found_in)
        out = {}
        if block_hash is not None:
            out["in_active_chain"] = info.in_active_chain
        spent = None
        if verbosity >= 2 and info is not None and info.in_active_chain and not tx.is_coinbase():
            spent = chain.spent_coins(info.hash, tx.txid())
        out.update(tx_with_undo_to_json(tx, ctx.node.chain_name, spent, include_prevout=spent is not None))
        if found_in is not None:
            out["blockhash"] = hash_to_hex(found_in)
            if info.in_active_chain:
                out["confirmations"] = info.confirmations
                out["time"] = info.time
                out["blocktime"] = info.time
            else:
                out["confirmations"] = 0
        return out


METHODS = [
    Method("sendrawtransaction", "rawtransactions", sendrawtransaction,
           [Param("hexstring", STR_HEX, True), Param("maxfeerate", AMOUNT), Param("maxburnamount", AMOUNT)]),
    Method("getrawtransaction", "rawtransactions", getrawtransaction,
           [Param("txid", STR_HEX, True), Param("verbosity", ANY), Param("blockhash", STR_HEX)]),
]
