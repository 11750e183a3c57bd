"""Watch-only wallets with many UTXOs on the real Bitcoin Core, built in seconds rather than hours.

    wallets = build_utxo_wallets(core, [1_000, 10_000])   # {size: UtxoWallet}
    core.rpc("createwallet", "w1000", True, True)
    core.rpc("importdescriptors", wallets[1000].import_request(), wallet="w1000")

Coinbases pay the anyone-can-spend P2WSH(OP_TRUE) (tests.kit.anyone); each coinbase is then
spent by one transaction with up to `OUTPUTS_PER_TX` outputs paying the addresses of one wallet's
`wpkh` descriptor in turn, with amounts that differ (so that coin selection has work to do).
Those transactions go into blocks made here and handed to Core's `submitblock` (a 100k-UTXO wallet
is 50 transactions in 5 blocks), which is much faster than Core's wallet sending them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quill.chain.block import Block, BlockHeader
from quill.chain.miner import add_witness_commitment, coinbase_tx, grind
from quill.chain.params import POW_LIMIT_REGTEST
from quill.chain.upstream import UpstreamRPC
from quill.tx.address import decode_destination
from quill.tx.descriptor import add_checksum
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.wallet.bip32 import master_from_seed
from tests.kit.anyone import ANYONE_ADDRESS, ANYONE_SCRIPT, ANYONE_WITNESS
from tests.kit.bitcoind import BitcoinD

OUTPUTS_PER_TX = 2_000          # ~62 kB each
TXS_PER_BLOCK = 12              # 12 x ~250k weight units: under the 4M block weight
MAX_ADDRESSES = 10_000          # a wallet of more UTXOs pays each address several times
COINBASE_MATURITY_BLOCKS = 101


@dataclass
class UtxoWallet:
    size: int            # UTXOs it holds
    descriptor: str      # wpkh(tpub.../0/*) with its checksum
    addresses: int       # how many of its addresses were paid (range 0 .. addresses - 1)

    def import_request(self) -> list[dict[str, Any]]:
        return [{"desc": self.descriptor, "timestamp": 0, "range": [0, self.addresses - 1]}]


def amount_of(k: int) -> int:
    """The k-th output's value in satoshis: 1,000 to 20,000, all different within a stretch."""
    return 1_000 + (k * 7_919) % 19_001


def wpkh_descriptor(seed: bytes) -> str:
    """A watch-only wpkh descriptor of the regtest master key of `seed`, receive branch."""
    return add_checksum(f"wpkh({master_from_seed(seed).neuter().serialize('regtest')}/0/*)")


def submit_block(node: UpstreamRPC, txs: list[Transaction]) -> None:
    """A block holding exactly `txs` on Core's tip, given to submitblock."""
    tip = node.call("getblockheader", node.call("getbestblockhash"))
    height = tip["height"] + 1
    block = Block(BlockHeader(0x20000000, bytes.fromhex(tip["hash"])[::-1], bytes(32), tip["time"] + 1,
                              0x207FFFFF, 0), [coinbase_tx(height, ANYONE_SCRIPT, 0)] + txs)
    add_witness_commitment(block)
    grind(block, POW_LIMIT_REGTEST, 1 << 20)
    result = node.call("submitblock", block.serialize().hex())
    if result is not None:
        raise RuntimeError(f"Core refused the block: {result}")


def build_utxo_wallets(core: BitcoinD, sizes: list[int], seed_prefix: str = "utxos") -> dict[int, UtxoWallet]:
    """One wallet descriptor per size, each paid `size` UTXOs on Core's chain (confirmed)."""
    node = UpstreamRPC(core.url_for_follower, timeout=600)
    needed = sum(-(-n // OUTPUTS_PER_TX) for n in sizes)
    hashes = node.call("generatetoaddress", needed, ANYONE_ADDRESS)
    node.call("generatetoaddress", COINBASE_MATURITY_BLOCKS, ANYONE_ADDRESS)
    coinbases = [node.call("getblock", h, 1)["tx"][0] for h in hashes]
    wallets: dict[int, UtxoWallet] = {}
    txs: list[Transaction] = []
    k = 0
    for n in sizes:
        wallet = UtxoWallet(n, wpkh_descriptor(f"{seed_prefix}-{n}".encode()), min(n, MAX_ADDRESSES))
        wallets[n] = wallet
        addresses = node.call("deriveaddresses", wallet.descriptor, [0, wallet.addresses - 1])
        scripts = [decode_destination(a, "regtest") for a in addresses]
        for start in range(0, n, OUTPUTS_PER_TX):
            outs = [TxOut(amount_of(start + i), scripts[(start + i) % len(scripts)])
                    for i in range(min(OUTPUTS_PER_TX, n - start))]
            # the coinbase's value beyond the outputs is left to the block's (unclaimed) fees
            tx = Transaction(2, [TxIn(OutPoint(bytes.fromhex(coinbases[k])[::-1], 0), b"", 0xFFFFFFFE)], outs, 0)
            tx.vin[0].witness = list(ANYONE_WITNESS)
            txs.append(tx)
            k += 1
    for i in range(0, len(txs), TXS_PER_BLOCK):
        submit_block(node, txs[i:i + TXS_PER_BLOCK])
    return wallets
