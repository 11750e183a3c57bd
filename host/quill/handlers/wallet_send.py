"""sendtoaddress (Core's wallet/rpc/spend.cpp). Quill's wallets hold no private keys, so, as
Core for such wallets, it checks its arguments and refuses: an external-signer wallet is sent
from with `send` (Core's advice), the others sign elsewhere (`send` hands back the PSBT)."""
from __future__ import annotations

from typing import Any

from quill.handlers.feebump import _fee_rate
from quill.handlers.psbt import _add_outputs
from quill.handlers.wallet import _Locked
from quill.rpc.errors import RPC_WALLET_ERROR, RPCError
from quill.rpc.registry import AMOUNT, BOOL, NUM, STR, Method, Param
from quill.tx.transaction import Transaction

EXTERNAL_SIGNER = "Error: sendtoaddress and sendmany are not supported for wallets with external signers; use " \
                  "send instead"
PRIVATE_KEYS_DISABLED = "Error: Private keys are disabled for this wallet"


def sendtoaddress(ctx: Any, args: list[Any]) -> Any:
    address, amount, _comment, _comment_to, _subtract, _replaceable, conf_target, estimate_mode, _reuse, \
        fee_rate, _verbose = args
    with _Locked(ctx) as wallet:
        # Core's SetFeeEstimateMode, then ParseOutputs, then SendMoney's refusal
        _fee_rate({"conf_target": conf_target, "estimate_mode": estimate_mode, "fee_rate": fee_rate})
        _add_outputs(Transaction(2, [], [], 0), {address: amount}, ctx.node.chain_name)
        raise RPCError(RPC_WALLET_ERROR, EXTERNAL_SIGNER if wallet.external_signer else PRIVATE_KEYS_DISABLED)


METHODS = [
    Method("sendtoaddress", "wallet", sendtoaddress, [
        Param("address", STR, required=True), Param("amount", AMOUNT, required=True), Param("comment", STR),
        Param("comment_to", STR), Param("subtractfeefromamount", BOOL), Param("replaceable", BOOL),
        Param("conf_target", NUM), Param("estimate_mode", STR), Param("avoid_reuse", BOOL),
        Param("fee_rate", AMOUNT), Param("verbose", BOOL)], wallet=True),
]
