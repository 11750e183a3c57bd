"""The one place the chain asks the script interpreter (quill.tx.verify) whether inputs are authorised.

The interpreter is a separate module; until it is installed every script
passes, which `interpreter_available()` reports (getblockchaininfo warnings,
the bench, the tests). Block checks use Core's mandatory (consensus) flags,
mempool checks the standard flags.
"""
import importlib

_verify = None
_looked = False


def _interpreter():
    global _verify, _looked
    if not _looked:
        _looked = True
        try:
            _verify = importlib.import_module("quill.tx.verify")
        except ImportError:
            _verify = None
    return _verify


def interpreter_available() -> bool:
    return _interpreter() is not None


def script_failure(tx, spent_coins, standard: bool):
    """None when every input of `tx` verifies against the outputs it spends, else the script error text.

    `spent_coins` are the Coins the inputs spend, in input order.
    """
    verify = _interpreter()
    if verify is None:
        return None
    spent = [(c.value, c.script_pubkey) for c in spent_coins]
    flags_name = "STANDARD_SCRIPT_VERIFY_FLAGS" if standard else "MANDATORY_SCRIPT_VERIFY_FLAGS"
    flags = getattr(verify, flags_name, None)
    try:
        result = verify.verify_tx(tx, spent) if flags is None else verify.verify_tx(tx, spent, flags)
    except Exception as e:  # the interpreter reports a failing input by raising
        return str(e) or type(e).__name__
    if result is None or result is True:
        return None
    return result if isinstance(result, str) else "script verification failed"
