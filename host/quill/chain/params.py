"""Consensus parameters per chain (Core's kernel/chainparams.cpp), as far as Quill's chain uses them.

Only regtest carries its genesis block built in: the embedded chain is a
regtest chain. The other chains are reachable through -chainsource, where the
upstream node provides the blocks and the genesis hash is checked here.
"""
from dataclasses import dataclass

from quill.consensus import (  # noqa: F401 (re-exported)
    COIN,
    COINBASE_MATURITY,
    MAX_BLOCK_SIGOPS_COST,
    MAX_BLOCK_WEIGHT,
    MAX_MONEY,
    WITNESS_SCALE_FACTOR,
)
from quill.tx.hashes import hex_to_hash
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut

# A block time may run at most this far ahead of the local clock (Core's MAX_FUTURE_BLOCK_TIME).
MAX_FUTURE_BLOCK_TIME = 2 * 60 * 60
# The node leaves initial block download once the tip is younger than this (Core's -maxtipage).
MAX_TIP_AGE = 24 * 60 * 60
# Core's MAX_FEE_ESTIMATION_TIP_AGE: a tip older than this, and the fee estimator ignores new transactions.
MAX_FEE_ESTIMATION_TIP_AGE = 3 * 60 * 60
# Core's VERSIONBITS_TOP_BITS: the version a miner signals with when no deployment is pending.
VERSIONBITS_TOP_BITS = 0x20000000

POW_LIMIT_REGTEST = 0x7FFFFF << (8 * (0x20 - 3))


@dataclass(frozen=True)
class ChainParams:
    name: str
    genesis_hash: bytes            # internal byte order
    pow_limit: int
    pow_no_retargeting: bool
    subsidy_halving_interval: int
    bip34_height: int
    bip65_height: int
    bip66_height: int
    csv_height: int
    segwit_height: int
    # Difficulty adjustment (Core's nPowTargetTimespan, nPowTargetSpacing, fPowAllowMinDifficultyBlocks)
    pow_target_timespan: int = 14 * 24 * 60 * 60
    pow_target_spacing: int = 10 * 60
    allow_min_difficulty: bool = False


def _params(name, genesis_hex, pow_limit, no_retarget, halving, bip34, bip65, bip66, csv, segwit,
            allow_min_difficulty=False):
    return ChainParams(name, hex_to_hash(genesis_hex), pow_limit, no_retarget, halving,
                       bip34, bip65, bip66, csv, segwit, allow_min_difficulty=allow_min_difficulty)


PARAMS = {
    "main": _params("main", "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f",
                    0x00000000FFFF << 208, False, 210_000, 227_931, 388_381, 363_725, 419_328, 481_824),
    "test": _params("test", "000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943",
                    0x00000000FFFF << 208, False, 210_000, 21_111, 581_885, 330_776, 770_112, 834_624,
                    allow_min_difficulty=True),
    "testnet4": _params("testnet4", "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043",
                        0x00000000FFFF << 208, False, 210_000, 1, 1, 1, 1, 1, allow_min_difficulty=True),
    "signet": _params("signet", "00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6",
                      0x00000377AE << 216, False, 210_000, 1, 1, 1, 1, 1),
    "regtest": _params("regtest", "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206",
                       POW_LIMIT_REGTEST, True, 150, 1, 1, 1, 1, 0, allow_min_difficulty=True),
}


def chain_params(name: str) -> ChainParams:
    return PARAMS[name]


def block_subsidy(height: int, params: ChainParams) -> int:
    """Core's GetBlockSubsidy: 50 BTC halved every interval, zero after 64 halvings."""
    halvings = height // params.subsidy_halving_interval
    if halvings >= 64:
        return 0
    return (50 * COIN) >> halvings


# Satoshi's genesis transaction, shared by main, test, signet and regtest.
_GENESIS_SCRIPT_SIG = bytes.fromhex(
    "04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e20"
    "6272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73")
_GENESIS_OUTPUT_SCRIPT = bytes.fromhex(
    "4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e5"
    "1ec112de5c384df7ba0b8d578a4c702b6bf11d5fac")


def regtest_genesis_block():
    """Core's CreateGenesisBlock(1296688602, 2, 0x207fffff, 1, 50 * COIN) for regtest."""
    from .block import Block, BlockHeader
    from .merkle import block_merkle_root
    coinbase = Transaction(1, [TxIn(OutPoint(), _GENESIS_SCRIPT_SIG)], [TxOut(50 * COIN, _GENESIS_OUTPUT_SCRIPT)], 0)
    block = Block(BlockHeader(1, bytes(32), bytes(32), 1296688602, 0x207FFFFF, 2), [coinbase])
    block.header.merkle_root = block_merkle_root(block.txs)[0]
    return block
