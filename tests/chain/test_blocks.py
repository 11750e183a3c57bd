"""Block codec, merkle roots, proof of work and subsidy against Core's known values."""
import pytest

from quill.chain import merkle, rules
from quill.chain import pow as cpow
from quill.chain.block import Block, BlockHeader
from quill.chain.params import COIN, block_subsidy, chain_params, regtest_genesis_block
from quill.tx.hashes import hash_to_hex, sha256d
from quill.tx.serialize import DeserializationError

GENESIS_MERKLE = "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"


def _genesis_with_header(time, nonce, bits):
    block = regtest_genesis_block()
    block.header.time, block.header.nonce, block.header.bits = time, nonce, bits
    return block


@pytest.mark.parametrize("chain,time,nonce,bits", [
    ("regtest", 1296688602, 2, 0x207FFFFF),
    ("main", 1231006505, 2083236893, 0x1D00FFFF),
    ("test", 1296688602, 414098458, 0x1D00FFFF),
])
def test_genesis_blocks_hash_as_core(chain, time, nonce, bits):
    block = _genesis_with_header(time, nonce, bits)
    assert block.hash() == chain_params(chain).genesis_hash
    assert hash_to_hex(block.header.merkle_root) == GENESIS_MERKLE
    assert cpow.check_proof_of_work(block.hash(), bits, chain_params(chain).pow_limit)


def test_regtest_genesis_hash_and_size():
    block = regtest_genesis_block()
    assert hash_to_hex(block.hash()) == "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"
    assert block.size() == 285 and block.stripped_size() == 285


def test_block_round_trip_and_truncation():
    raw = regtest_genesis_block().serialize()
    again = Block.from_bytes(raw)
    assert again.serialize() == raw and again.hash() == regtest_genesis_block().hash()
    for cut in (0, 79, 80, 81, len(raw) - 1):
        with pytest.raises(DeserializationError):
            Block.from_bytes(raw[:cut])
    with pytest.raises(DeserializationError):
        Block.from_bytes(raw + b"\x00")
    assert Block.from_bytes(raw + b"\x00", allow_trailing=True).hash() == again.hash()
    # A transaction count far beyond the data is refused before any allocation.
    with pytest.raises(DeserializationError):
        Block.from_bytes(raw[:80] + b"\xfe\xff\xff\xff\x01")


def test_header_round_trip():
    h = BlockHeader(0x20000000, bytes(range(32)), bytes(range(32, 64)), 1700000000, 0x207FFFFF, 12345)
    assert BlockHeader.from_bytes(h.serialize()).serialize() == h.serialize()
    assert h.hash() == sha256d(h.serialize())


def test_merkle_root_odd_count_and_mutation():
    a, b, c = (sha256d(bytes([i])) for i in range(3))
    ab = sha256d(a + b)
    assert merkle.merkle_root([a]) == (a, False)
    assert merkle.merkle_root([a, b]) == (ab, False)
    # Odd levels duplicate their last hash: [a, b, c] and [a, b, c, c] share a root (CVE-2012-2459).
    root3, mutated3 = merkle.merkle_root([a, b, c])
    root4, mutated4 = merkle.merkle_root([a, b, c, c])
    assert root3 == sha256d(ab + sha256d(c + c)) == root4
    assert not mutated3 and mutated4


@pytest.mark.parametrize("bits,target", [
    (0x207FFFFF, 0x7FFFFF << 232),
    (0x1D00FFFF, 0xFFFF << 208),
    (0x1B0404CB, 0x0404CB << 192),
])
def test_compact_round_trip(bits, target):
    assert cpow.compact_to_target(bits) == (target, False, False)
    assert cpow.target_to_compact(target) == bits


def test_compact_negative_and_overflow_flags():
    assert cpow.compact_to_target(0x04923456)[1]            # sign bit set
    assert cpow.compact_to_target(0xFF123456)[2]            # exponent overflows 256 bits
    assert not cpow.check_proof_of_work(bytes(32), 0x04923456, 1 << 255)


def test_difficulty_and_work():
    assert cpow.difficulty(0x1D00FFFF) == 1.0
    assert "%.16g" % cpow.difficulty(0x207FFFFF) == "4.656542373906925e-10"
    assert cpow.block_proof(0x207FFFFF) == 2
    assert cpow.block_proof(0x1D00FFFF) == 0x100010001


def test_regtest_subsidy_halves_every_150_blocks():
    p = chain_params("regtest")
    assert block_subsidy(0, p) == 50 * COIN
    assert block_subsidy(149, p) == 50 * COIN
    assert block_subsidy(150, p) == 25 * COIN
    assert block_subsidy(300, p) == 1250000000
    assert block_subsidy(150 * 64, p) == 0
    assert block_subsidy(209_999, chain_params("main")) == 50 * COIN


@pytest.mark.parametrize("height,prefix", [(1, "51"), (16, "60"), (17, "0111"), (127, "017f"), (128, "028000"),
                                           (255, "02ff00"), (256, "020001"), (65536, "03000001")])
def test_bip34_height_push(height, prefix):
    assert rules.bip34_prefix(height).hex() == prefix


def test_format_money_as_core():
    assert rules.format_money(100000000) == "1.00"
    assert rules.format_money(1000000) == "0.01"
    assert rules.format_money(1500000) == "0.015"
    assert rules.format_money(1) == "0.00000001"
