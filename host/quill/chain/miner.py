"""Block assembly and grinding for the built-in regtest chain (Core's node/miner.cpp, rpc/mining.cpp).

Blocks look like Core's: version 0x20000000; coinbase version 2 with
scriptSig `<height> OP_0`, nLockTime height-1 and a non-final sequence (as
Core since v30); the payout first, then the BIP141 commitment output, which
Core always adds; time max(median-time-past + 1, now).
"""
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut

from . import merkle, rules
from .block import Block, BlockHeader
from .params import MAX_BLOCK_WEIGHT, VERSIONBITS_TOP_BITS, block_subsidy
from .pow import check_proof_of_work, target_to_compact

# Room kept for the header and coinbase (Core's default -blockreservedweight).
BLOCK_RESERVED_WEIGHT = 8000
MAX_SEQUENCE_NONFINAL = 0xFFFFFFFE
WITNESS_RESERVED_VALUE = bytes(32)


def coinbase_tx(height: int, script_pubkey: bytes, value: int) -> Transaction:
    script_sig = rules.bip34_prefix(height) + b"\x00"
    txin = TxIn(OutPoint(), script_sig, MAX_SEQUENCE_NONFINAL, [WITNESS_RESERVED_VALUE])
    return Transaction(2, [txin], [TxOut(value, script_pubkey)], height - 1)


def select_mempool_txs(chainstate):
    """Every pool transaction in parent-first order, up to the block weight limit (no fee ranking needed
    on regtest, where nothing competes for space)."""
    pool = chainstate.mempool
    chosen, fees, weight = [], 0, BLOCK_RESERVED_WEIGHT
    skipped = set()
    for txid in pool.sorted():
        entry = pool.get(txid)
        if any(p in skipped for p in pool.parents(txid)) or weight + entry.weight > MAX_BLOCK_WEIGHT:
            skipped.add(txid)
            continue
        chosen.append(entry.tx)
        fees += entry.fee
        weight += entry.weight
    return chosen, fees


def new_block(chainstate, script_pubkey: bytes, txs, fees: int, now: int) -> Block:
    """An unground block on the active tip paying subsidy + `fees` to `script_pubkey`."""
    tip = chainstate.tip
    params = chainstate.params
    height = tip.height + 1
    coinbase = coinbase_tx(height, script_pubkey, block_subsidy(height, params) + fees)
    block = Block(BlockHeader(VERSIONBITS_TOP_BITS, tip.hash, bytes(32),
                              max(rules.median_time_past(tip) + 1, int(now)),
                              target_to_compact(params.pow_limit), 0),
                  [coinbase] + list(txs))
    add_witness_commitment(block)
    return block


def add_witness_commitment(block: Block) -> None:
    """BIP141: commit to the wtxids in the coinbase's last output, then fix the merkle root."""
    coinbase = block.txs[0]
    root = merkle.block_witness_merkle_root(block.txs)
    commitment = merkle.witness_commitment(root, WITNESS_RESERVED_VALUE)
    coinbase.vout = [o for o in coinbase.vout if not o.script_pubkey.startswith(merkle.WITNESS_COMMITMENT_HEADER)]
    coinbase.vout.append(TxOut(0, merkle.commitment_script(commitment)))
    block.header.merkle_root = merkle.block_merkle_root(block.txs)[0]


def grind(block: Block, pow_limit: int, max_tries: int) -> bool:
    """Search nonces until the header meets its target (Core's GenerateBlock loop); False when tries run out."""
    header = block.header
    while max_tries > 0 and header.nonce < 0xFFFFFFFF and not check_proof_of_work(header.hash(), header.bits,
                                                                                      pow_limit):
        header.nonce += 1
        max_tries -= 1
    return max_tries > 0


def update_uncommitted_block_structures(block: Block) -> None:
    """Core's UpdateUncommittedBlockStructures: a block committing to wtxids without a witness reserved
    value gets the default (all-zero) one, so miners may leave it out."""
    coinbase = block.txs[0]
    if merkle.witness_commitment_index(coinbase) is not None and not coinbase.vin[0].witness:
        coinbase.vin[0].witness = [WITNESS_RESERVED_VALUE]
