"""getbalance's cached credit (quill.wallet.credit) against the balance summed from scratch, after
every kind of wallet event: receives in the mempool and in blocks, a spend, a double spend that
conflicts it in a block, the reorg that undoes that block, abandontransaction, coinbase maturity,
and a store transaction that fails (the durability resync)."""
from dataclasses import asdict

import pytest

from quill.tx.hashes import hash_to_hex
from quill.wallet import results
from quill.wallet.balance import get_balance
from quill.wallet.credit import CreditCache
from tests.wallet.chainkit import FOREIGN, Kit
from tests.wallet.test_wallet_chain import make_wallet, script_of


@pytest.fixture
def kit(tmp_path):
    k = Kit(tmp_path)
    yield k
    k.close()


def balances(kit, wallet, fresh):
    """getbalance's Balance at minconf 0, 1 and 2: from the running cache, or from a new one."""
    if fresh:
        kept, wallet.credit_cache = wallet.credit_cache, CreditCache()
    try:
        return [asdict(get_balance(results.View(wallet, kit.chain), m)) for m in (0, 1, 2)]
    finally:
        if fresh:
            wallet.credit_cache = kept


def same_as_fresh(kit, wallet):
    cached = balances(kit, wallet, fresh=False)
    assert cached == balances(kit, wallet, fresh=True)
    return cached[0]


def test_cached_credit_follows_every_event(kit):
    name = make_wallet(kit)
    wallet = kit.manager.resolve(name)
    coins = kit.coinbase_coins(2)      # the wallet watches the anyone-can-spend address: its coins
    start = same_as_fresh(kit, wallet)
    assert start["trusted"] == sum(v for _, v in coins)
    mine = script_of(kit, kit.rpc("getnewaddress", wallet=name))

    pay = kit.spend([coins[0]], [(mine, 100_000_000), (FOREIGN, coins[0][1] - 100_010_000)])
    kit.chain.send_transaction(pay)
    pending = same_as_fresh(kit, wallet)
    assert pending["trusted"] == start["trusted"] - coins[0][1] + 100_000_000   # our own spend: trusted

    blocks = kit.mine(1, FOREIGN)
    confirmed = same_as_fresh(kit, wallet)
    assert confirmed["trusted"] == pending["trusted"]

    # A double spend of the same coin confirmed on a longer branch conflicts `pay`.
    kit.chain.invalidate(blocks[0])
    same_as_fresh(kit, wallet)
    other = kit.spend([coins[0]], [(FOREIGN, coins[0][1] - 20_000)])
    kit.chain.generate_block(FOREIGN, [other])
    kit.mine(1, FOREIGN)
    conflicted = same_as_fresh(kit, wallet)
    assert conflicted["trusted"] == start["trusted"] - coins[0][1]

    # A spend that leaves the mempool unconfirmed counts in `nonmempool`; abandoning it gives the coin back.
    spend = kit.spend([coins[1]], [(FOREIGN, coins[1][1] - 10_000)])
    kit.chain.send_transaction(spend)
    assert same_as_fresh(kit, wallet)["trusted"] == start["trusted"] - coins[0][1] - coins[1][1]
    wallet.transaction_removed_from_mempool(spend)
    evicted = same_as_fresh(kit, wallet)
    assert evicted["nonmempool"] == -coins[1][1]
    assert kit.rpc("abandontransaction", hash_to_hex(spend.txid()), wallet=name) is None
    abandoned = same_as_fresh(kit, wallet)
    assert abandoned["nonmempool"] == 0 and abandoned["trusted"] == evicted["trusted"]

    # A coinbase to the wallet is immature for 100 blocks, then trusted.
    kit.mine(1, mine)
    assert same_as_fresh(kit, wallet)["immature"] > 0
    kit.mine(100, FOREIGN)
    assert same_as_fresh(kit, wallet)["immature"] == 0


def test_a_failed_store_transaction_rebuilds_the_cached_credit(kit):
    name = make_wallet(kit)
    wallet = kit.manager.resolve(name)
    coins = kit.coinbase_coins(1)
    before = same_as_fresh(kit, wallet)
    spend = kit.spend([coins[0]], [(FOREIGN, coins[0][1] - 10_000)])
    with pytest.raises(RuntimeError), wallet.store.batch():
        wallet.transaction_added_to_mempool(spend)
        assert same_as_fresh(kit, wallet)["trusted"] == before["trusted"] - coins[0][1]
        raise RuntimeError("the write fails")
    assert same_as_fresh(kit, wallet) == before
