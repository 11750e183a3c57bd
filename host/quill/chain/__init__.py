"""The chain: a block index over a built-in regtest chain (or a followed node), a UTXO set, a mempool.

Modes
    Built-in (default, regtest only): the chain starts at Core's regtest genesis
    block (0f9188f1...2206) and grows by generatetoaddress / generateblock /
    submitblock, with every rule below checked. -chainsource=http://user:pass@host:port
    instead follows the user's own node, TRUSTING it for validity (follower.py,
    trusted.py): headers first (linkage, difficulty and proof of work checked), no
    block store, UTXO set or script checks; blocks are fetched (upstream.py) only
    when a wallet needs them (its birthday; BIP158 filters through scanblocks) and
    read for the wallets' transactions only (scan.py); the upstream best block is
    our tip, reorgs included; its mempool is mirrored by polling or ZMQ
    (zmqstream.py); sendrawtransaction is relayed to it; mining, submitblock,
    invalidateblock and reconsiderblock are refused. On other chains without
    -chainsource quilld runs without a chain.

Rules (rules.py, policy.py, script_check.py), with Core's reject reasons
    Block: PoW at the header's nBits (regtest: exactly 0x207fffff), merkle root
    and CVE-2012-2459 mutation, coinbase placement, CheckTransaction, legacy
    sigops, time > median-time-past of the parent and <= now + 2 h, version floors,
    finality, BIP34 height push, BIP141 witness commitment (required once a
    block carries witness data), weight, inputs unspent, COINBASE_MATURITY 100,
    value in >= out, coinbase <= subsidy + fees (regtest halving every 150
    blocks), scripts under MANDATORY flags via quill.tx.verify.
    Mempool: CheckTransaction, not coinbase, standardness (version, size,
    scriptSig push-only, output types, dust), finality, inputs exist, maturity,
    amounts, min relay fee (100 sat/kvB), Core 31's replacement of conflicting
    transactions and cluster limits (replacement.py, cluster.py), scripts under
    STANDARD flags.
    Not implemented: BIP68 relative lock-times, P2SH/witness sigop cost, TRUC
    (v3) rules, package validation, difficulty retargeting (the follower
    trusts the upstream node's chain choice and checks each header's own PoW).

Chain selection (validation.py, index.py)
    Most work wins; equal work: first seen. Stale branches stay in the index
    (getblockheader/getblock show confirmations -1). A reorg disconnects down to
    the fork and connects the new branch; transactions of disconnected blocks go
    back to the mempool when still valid, and pool transactions whose inputs
    vanished or became immature leave it (reason "reorg"). A block that fails
    while being connected is marked failed with its descendants, and the best
    remaining chain is activated. invalidateblock/reconsiderblock as Core's.

Storage (store.py): <chain_datadir>/chain.sqlite, WAL mode
    Tables blocks (header, raw block, status, first-seen order), meta (tip),
    utxo, undo, txindex, mempool, txospender, schema_version; MIGRATIONS upgrades older
    files step by step. Each block connect/disconnect is ONE SQLite transaction
    (UTXO changes, undo record, txindex, tip), so kill -9 at any point leaves a
    consistent chain; a submitted block that extends the tip is stored in that
    same transaction, so a rejected block leaves nothing behind. The mempool is
    saved as it changes and re-validated at start (Core's mempool.dat). The
    txindex is always on; entries of stale blocks are kept, as Core's. The spender
    index (-txospenderindex, spender_index.py) moves with the tip in the same
    transaction once synced, and catches up in the background before that.

Fee estimation (fee_estimator.py, fee_estimates_file.py), built-in chain only
    Core's CBlockPolicyEstimator, fed by the chain's events (mempool entries, the
    entries each connected block confirms, other removals); <chain_datadir>/
    fee_estimates.json is read at start (unless older than 60 h) and written every
    hour and at close, as Core's fee_estimates.dat. A follower's node estimates.

Interface: quill.chain.service.ChainService (see its docstring) — the daemon
sets ctx.node.chain to it; RPC handlers (handlers/blockchain.py, mining.py,
rawtransactions_chain.py) and the wallet reach the chain only through it.
"""
