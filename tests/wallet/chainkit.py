"""Test helpers: a real built-in regtest ChainService in-process, the wallet
manager on it, RPC calls through the real dispatcher, and anyone-can-spend
coins (P2WSH of OP_TRUE) so tests can build spends without a signer."""
import types

from quill.chain.service import ChainService
from quill.handlers import wallet as wallet_handlers
from quill.handlers.errors import guarded_methods
from quill.rpc import univalue
from quill.rpc.errors import RPCError
from quill.rpc.jsonrpc import CallContext, Dispatcher, Request
from quill.rpc.registry import Registry
from quill.tx.address import encode_destination
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.wallet.fallbackfee import FallbackFee
from quill.wallet.manager import WalletManager
from tests.kit.anyone import ANYONE_SCRIPT, ANYONE_WITNESS
from tests.kit.postgres import wallet_catalog

FOREIGN = b"\x00\x14" + b"\x11" * 20                   # nobody's P2WPKH


class Kit:
    def __init__(self, tmp_path, keypool=50, store=None):
        """store: a -store=postgresql:// URL that holds the chain and the wallets, as quilld's
        -store does; by default the chain is in tmp_path and the wallets where
        QUILL_TEST_STORE says (tests.kit.postgres.wallet_catalog)."""
        store_factory = catalog = None
        if store is not None:
            from quill.chain.pg_store import PgChainStore
            from quill.wallet.pg_store import PgCatalog
            store_factory = lambda: PgChainStore(store, "regtest")  # noqa: E731
            catalog = PgCatalog(store, "regtest")
        else:
            catalog = wallet_catalog(tmp_path, "regtest")
        self.chain = ChainService("regtest", str(tmp_path), store_factory=store_factory).start()
        self.manager = WalletManager(self.chain, "regtest", str(tmp_path), keypool=keypool, catalog=catalog)
        node = types.SimpleNamespace(chain_name="regtest", wallets=self.manager, chain=self.chain,
                                     deprecated_rpc=frozenset(), fallback_fee=FallbackFee())
        registry = Registry()
        registry.add(guarded_methods(wallet_handlers.METHODS))
        self.dispatcher = Dispatcher(registry)
        self.node = node

    def rpc(self, method, *params, wallet=None):
        req = Request(method=method, params=univalue.loads(univalue.dumps(list(params))))
        result = self.dispatcher.execute(req, CallContext(node=self.node, wallet_name=wallet))
        return univalue.loads(univalue.dumps(result))

    def rpc_error(self, method, *params, wallet=None):
        try:
            self.rpc(method, *params, wallet=wallet)
        except RPCError as e:
            return e.code, e.message
        raise AssertionError(f"{method} did not fail")

    def mine(self, n=1, script=ANYONE_SCRIPT):
        return self.chain.generate(script, n, 1_000_000)

    def coinbase_coins(self, n):
        """Mature anyone-can-spend coinbase outpoints: mine n + 100 blocks."""
        hashes = self.mine(n)
        self.mine(100, FOREIGN)
        coins = []
        for h in hashes:
            cb = self.chain.block(h).txs[0]
            coins.append((OutPoint(cb.txid(), 0), cb.vout[0].value))
        return coins

    def spend(self, inputs, outputs, sequence=0xFFFFFFFE):
        """A tx spending anyone-can-spend outpoints [(OutPoint, value)] to [(script, value)]."""
        vin = [TxIn(op, b"", sequence) for op, _ in inputs]
        for txin in vin:
            txin.witness = list(ANYONE_WITNESS)
        return Transaction(2, vin, [TxOut(v, s) for s, v in outputs], 0)

    def address(self, script):
        return encode_destination(script, "regtest")

    def close(self):
        self.manager.close()
        self.chain.close()
