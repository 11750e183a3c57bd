"""The one place the chain asks the script interpreter (quill.tx.verify) whether inputs are authorised.

Reject reasons as Core's CheckInputScripts since the rename of the
script-flag reasons: a block input failing consensus flags is
"block-script-verify-flag-failed (<ScriptError text>)"; a mempool input is
checked with the standard flags first, and a failure is reported as
"mempool-script-verify-flag-failed (...)" unless the consensus flags fail too.
"""
from quill.tx import verify
from quill.tx.transaction import TxOut


def _first_error(tx, spent, flags):
    data = verify.PrecomputedTransactionData(tx, spent)
    for i in range(len(tx.vin)):
        ok, error = verify.verify_input(tx, i, spent, flags, data)
        if not ok:
            return error.message
    return None


def script_failure(tx, spent_coins, standard: bool):
    """None when every input of `tx` verifies against the Coins it spends (input order), else the reason."""
    spent = [TxOut(c.value, c.script_pubkey) for c in spent_coins]
    if not standard:
        error = _first_error(tx, spent, verify.MANDATORY_SCRIPT_VERIFY_FLAGS)
        return None if error is None else f"block-script-verify-flag-failed ({error})"
    error = _first_error(tx, spent, verify.STANDARD_SCRIPT_VERIFY_FLAGS)
    if error is None:
        return None
    consensus_error = _first_error(tx, spent, verify.MANDATORY_SCRIPT_VERIFY_FLAGS)
    if consensus_error is not None:
        return f"block-script-verify-flag-failed ({consensus_error})"
    return f"mempool-script-verify-flag-failed ({error})"
