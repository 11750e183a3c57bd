"""Merkle roots of a block's transactions (Core's consensus/merkle.cpp) and the BIP141 witness commitment."""
from quill.tx.hashes import sha256d

# BIP141: the commitment output's script starts OP_RETURN, push 36, 0xaa21a9ed.
WITNESS_COMMITMENT_HEADER = b"\x6a\x24\xaa\x21\xa9\xed"
MINIMUM_WITNESS_COMMITMENT = 38


def merkle_root(hashes):
    """(root, mutated) as Core's ComputeMerkleRoot.

    `mutated` flags two identical hashes paired at some level: the odd-count
    duplication makes such a tree ambiguous (CVE-2012-2459), so a block with
    it is rejected as "bad-txns-duplicate".
    """
    level = list(hashes)
    if not level:
        return bytes(32), False
    mutated = False
    while len(level) > 1:
        for i in range(0, len(level) - 1, 2):
            if level[i] == level[i + 1]:
                mutated = True
        if len(level) & 1:
            level.append(level[-1])
        level = [sha256d(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0], mutated


def block_merkle_root(txs):
    return merkle_root([tx.txid() for tx in txs])


def block_witness_merkle_root(txs):
    """BIP141: the root over wtxids, with the coinbase's wtxid taken as zero."""
    return merkle_root([bytes(32)] + [tx.wtxid() for tx in txs[1:]])[0]


def witness_commitment_index(coinbase):
    """Index of the last output carrying a BIP141 commitment, or None (Core's GetWitnessCommitmentIndex)."""
    found = None
    for i, out in enumerate(coinbase.vout):
        spk = out.script_pubkey
        if len(spk) >= MINIMUM_WITNESS_COMMITMENT and spk[:6] == WITNESS_COMMITMENT_HEADER:
            found = i
    return found


def witness_commitment(witness_root: bytes, reserved_value: bytes) -> bytes:
    """BIP141: Double-SHA256(witness root || witness reserved value)."""
    return sha256d(witness_root + reserved_value)


def commitment_script(commitment: bytes) -> bytes:
    return WITNESS_COMMITMENT_HEADER + commitment
