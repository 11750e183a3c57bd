"""Proof of work: compact targets, chain work and difficulty (Core's pow.cpp, arith_uint256, GetDifficulty)."""


def compact_to_target(bits: int):
    """(target, negative, overflow) from nBits, as arith_uint256::SetCompact."""
    size = bits >> 24
    word = bits & 0x007FFFFF
    if size <= 3:
        target = word >> (8 * (3 - size))
    else:
        target = word << (8 * (size - 3))
    negative = word != 0 and (bits & 0x00800000) != 0
    overflow = word != 0 and (size > 34 or (word > 0xFF and size > 33) or (word > 0xFFFF and size > 32))
    return target, negative, overflow


def target_to_compact(target: int) -> int:
    """arith_uint256::GetCompact for a non-negative target."""
    size = (target.bit_length() + 7) // 8
    if size <= 3:
        word = target << (8 * (3 - size))
    else:
        word = target >> (8 * (size - 3))
    if word & 0x00800000:
        word >>= 8
        size += 1
    return word | (size << 24)


def check_proof_of_work(block_hash: bytes, bits: int, pow_limit: int) -> bool:
    """Core's CheckProofOfWork: a valid target no easier than the limit, and hash <= target."""
    target, negative, overflow = compact_to_target(bits)
    if negative or overflow or target == 0 or target > pow_limit:
        return False
    return int.from_bytes(block_hash, "little") <= target


def block_proof(bits: int) -> int:
    """Core's GetBlockProof: 2**256 / (target + 1), the expected hashes for one block."""
    target, negative, overflow = compact_to_target(bits)
    if negative or overflow or target == 0:
        return 0
    return (1 << 256) // (target + 1)


def difficulty(bits: int) -> float:
    """Core's GetDifficulty: the difficulty-1 target over this target, from nBits as a double."""
    shift = (bits >> 24) & 0xFF
    diff = 0x0000FFFF / (bits & 0x00FFFFFF)
    while shift < 29:
        diff *= 256.0
        shift += 1
    while shift > 29:
        diff /= 256.0
        shift -= 1
    return diff


def next_work_required(prev, params) -> int | None:
    """Core's GetNextWorkRequired for the block after `prev` (an index entry with .height, .header, .prev,
    .ancestor()): the nBits it must carry, or None where any value up to the limit is allowed (the
    min-difficulty chains, testnet and testnet4, whose 20-minute rule is not modelled here)."""
    interval = params.pow_target_timespan // params.pow_target_spacing
    if (prev.height + 1) % interval != 0:
        if params.allow_min_difficulty:
            return None
        return prev.header.bits
    if params.pow_no_retargeting:
        return prev.header.bits
    if params.allow_min_difficulty:
        return None
    first = prev.ancestor(prev.height - (interval - 1))
    timespan = prev.header.time - first.header.time
    timespan = max(params.pow_target_timespan // 4, min(params.pow_target_timespan * 4, timespan))
    target = compact_to_target(prev.header.bits)[0] * timespan // params.pow_target_timespan
    return target_to_compact(min(target, params.pow_limit))
