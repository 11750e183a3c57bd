"""Core's external-signer RPCs: enumeratesigners (rpc/external_signer.cpp) and
walletdisplayaddress (wallet/rpc/addresses.cpp), and the signing step that send, sendall,
bumpfee and walletprocesspsbt take for an external-signer wallet (FillPSBT with sign=true,
FinalizeAndExtractPSBT, CommitTransaction). Running the -signer command is quill.extsigner's;
the wallet's lock is not held while the signer waits for its user."""
from __future__ import annotations

from typing import Any

from quill.extsigner.errors import ExternalSignerError
from quill.extsigner.signer import display_address, no_signer_option, signer_for_signing
from quill.handlers.blockchain import chain_of
from quill.handlers.rawtransactions_chain import broadcast
from quill.handlers.signer_command import signer_source
from quill.handlers.wallet import _decode_address, _Locked
from quill.rpc.args import get_bool
from quill.rpc.errors import RPC_MISC_ERROR, RPCError
from quill.rpc.registry import STR, Method, Param
from quill.signing.psbt_signer import extract_transaction
from quill.tx.psbt import PSBT, encode_base64_psbt
from quill.tx.transaction import Transaction
from quill.wallet.external_signer import sign_externally

NO_SCRIPTPUBKEYMAN = "There is no ScriptPubKeyManager for this address"
DEFAULT_TRANSACTION_MAXFEE = 10_000_000  # Core's -maxtxfee default (0.1 BTC): CommitTransaction's limit


def enumeratesigners(ctx: Any, args: list[Any]) -> Any:
    source = signer_source(ctx)
    if source is None:
        raise RPCError(RPC_MISC_ERROR, "Error: " + no_signer_option().message)
    signers = source.enumerate(ctx.node.chain_name, every_device=True)
    return {"signers": [{"fingerprint": s.fingerprint, "name": s.name} for s in signers]}


def walletdisplayaddress(ctx: Any, args: list[Any]) -> Any:
    address = args[0]
    with _Locked(ctx) as wallet:
        script = _decode_address(ctx, address, "Invalid address")
        owners = wallet.scripts.get(script, []) if wallet.external_signer else []
        if not owners:
            raise ExternalSignerError(NO_SCRIPTPUBKEYMAN)
        desc_id, index = owners[0]
        descriptor = wallet.descs[desc_id].desc.inferred_string(index)
    display_address(signer_source(ctx), ctx.node.chain_name, descriptor, address)
    return {"address": address}


def signer_of(ctx: Any) -> Any:
    """The signing step an external-signer wallet's FillPSBT takes: Core's GetExternalSigner
    (any failure: EXTERNAL_SIGNER_NOT_FOUND), then its SignTransaction."""
    def sign(psbt: PSBT) -> PSBT:
        return signer_for_signing(signer_source(ctx), ctx.node.chain_name, psbt).sign_transaction(psbt)
    return sign


def sign_and_extract(ctx: Any, psbt: PSBT) -> tuple[PSBT, Transaction | None]:
    """FillPSBT(sign=true) through the signer, then FinalizeAndExtractPSBT: the network
    transaction, or None when the PSBT is not complete."""
    psbt, _ = sign_externally(psbt, signer_of(ctx), finalize=True)
    return psbt, extract_transaction(psbt)


def commit(ctx: Any, tx: Transaction) -> None:
    """Core's CommitTransaction: into the mempool, where the wallets see it. Quill answers a
    rejection with the mempool's error (Core keeps the transaction in the wallet and logs it)."""
    broadcast(chain_of(ctx), tx, DEFAULT_TRANSACTION_MAXFEE)


def finish_transaction(ctx: Any, psbt: PSBT, options: dict[str, Any]) -> dict[str, Any]:
    """The end of Core's FinishTransaction (send, sendall) for an external-signer wallet: sign,
    then broadcast unless `add_to_wallet` is false or `psbt` is asked for."""
    psbt, tx = sign_and_extract(ctx, psbt)
    psbt_opt_in = options.get("psbt") is not None and get_bool(options["psbt"])
    add_to_wallet = options.get("add_to_wallet") is None or get_bool(options["add_to_wallet"])
    result: dict[str, Any] = {}
    if psbt_opt_in or tx is None or not add_to_wallet:
        result["psbt"] = encode_base64_psbt(psbt)
    if tx is not None:
        result["txid"] = tx.txid_hex()
        if add_to_wallet and not psbt_opt_in:
            commit(ctx, tx)
        else:
            result["hex"] = tx.hex()
    result["complete"] = tx is not None
    return result


METHODS = [
    Method("enumeratesigners", "signer", enumeratesigners, []),
    Method("walletdisplayaddress", "wallet", walletdisplayaddress, [Param("address", STR, required=True)],
           wallet=True),
]
