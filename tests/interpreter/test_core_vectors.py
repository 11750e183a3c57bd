"""Core's script_tests.json, tx_valid.json and tx_invalid.json, checked as Core's
script_tests.cpp / transaction_tests.cpp check them (flag monotonicity included)."""
import pytest

from quill.tx.interpreter import verify_script
from quill.tx.script_error import ScriptError
from quill.tx.script_flags import (
    ALL_SCRIPT_VERIFY_FLAGS,
    FLAG_NAMES,
    SCRIPT_VERIFY_CLEANSTACK,
    SCRIPT_VERIFY_P2SH,
    SCRIPT_VERIFY_WITNESS,
    parse_flags,
)
from quill.tx.verify import (
    PrecomputedTransactionData,
    TransactionSignatureChecker,
    check_transaction,
    verify_transaction,
)
from tests.interpreter.coretest import script_test_case, script_test_rows, tx_test_case, tx_test_rows
from tests.kit.vectors import load_json


def fill_flags(flags):
    """Core's FillFlags: add what the set flags require."""
    if flags & SCRIPT_VERIFY_CLEANSTACK:
        flags |= SCRIPT_VERIFY_WITNESS
    if flags & SCRIPT_VERIFY_WITNESS:
        flags |= SCRIPT_VERIFY_P2SH
    return flags


def trim_flags(flags):
    """Core's TrimFlags: drop what lost its prerequisite."""
    if not flags & SCRIPT_VERIFY_P2SH:
        flags &= ~SCRIPT_VERIFY_WITNESS
    if not flags & SCRIPT_VERIFY_WITNESS:
        flags &= ~SCRIPT_VERIFY_CLEANSTACK
    return flags


def exclude_individual_flags(flags):
    """Core's ExcludeIndividualFlags: `flags` minus one flag, where still consistent."""
    out = []
    for bit in FLAG_NAMES.values():
        if flags & bit and fill_flags(flags & ~bit) == flags & ~bit:
            out.append(flags & ~bit)
    return out


# -- script_tests.json ----------------------------------------------------------

def _script_rows():
    return script_test_rows(load_json("core/script_tests.json"))


def _run(case, flags):
    data = PrecomputedTransactionData(case.tx, [case.credit])
    checker = TransactionSignatureChecker(case.tx, 0, case.amount, data)
    return verify_script(case.script_sig, case.script_pubkey, case.witness, flags, checker)


def test_script_tests_file_shape():
    cases = [script_test_case(r) for r in _script_rows()]
    assert len(cases) == 1222
    assert sum(1 for c in cases if c.expected is ScriptError.OK) == 675
    assert sum(1 for c in cases if c.witness) == 113


def test_every_script_test_gives_the_named_result():
    failures = []
    for row in _script_rows():
        case = script_test_case(row)
        ok, err = _run(case, case.flags)
        if err is not case.expected or ok != (case.expected is ScriptError.OK):
            failures.append((err.test_name, row))
    assert not failures, "%d rows differ, first: %r" % (len(failures), failures[:5])


def test_script_tests_results_are_monotonic_in_flags():
    """Removing a flag keeps an OK case OK; adding one keeps a failing case failing
    (Core checks the same with random extra flags)."""
    failures = []
    for row in _script_rows():
        case = script_test_case(row)
        expect_ok = case.expected is ScriptError.OK
        for bit in FLAG_NAMES.values():
            if expect_ok:
                flags = trim_flags(case.flags & ~bit)
            else:
                flags = fill_flags(case.flags | bit)
            ok, _ = _run(case, flags)
            if ok != expect_ok:
                failures.append((bit, row))
    assert not failures, "%d differ, first: %r" % (len(failures), failures[:3])


# -- tx_valid.json / tx_invalid.json ----------------------------------------------

def _tx_rows(name):
    return tx_test_rows(load_json("core/%s.json" % name))


def _all_ok(tx, spent, flags):
    return all(ok for ok, _ in verify_transaction(tx, spent, flags))


def test_tx_vector_counts():
    assert len(_tx_rows("tx_valid")) == 121
    assert len(_tx_rows("tx_invalid")) == 93


def test_tx_valid_verifies_with_all_but_the_excluded_flags():
    for row in _tx_rows("tx_valid"):
        tx, spent, flag_text = tx_test_case(row)
        assert check_transaction(tx) is None, row
        excluded = parse_flags(flag_text)
        assert fill_flags(ALL_SCRIPT_VERIFY_FLAGS & ~excluded) == ALL_SCRIPT_VERIFY_FLAGS & ~excluded
        results = verify_transaction(tx, spent, ALL_SCRIPT_VERIFY_FLAGS & ~excluded)
        assert results == [(True, ScriptError.OK)] * len(tx.vin), (results, row)


def test_tx_valid_flags_are_maximal_and_removable():
    """Dropping any further flag keeps the tx valid; setting any excluded flag breaks it."""
    for row in _tx_rows("tx_valid"):
        tx, spent, flag_text = tx_test_case(row)
        excluded = parse_flags(flag_text)
        for bit in FLAG_NAMES.values():
            assert _all_ok(tx, spent, trim_flags(ALL_SCRIPT_VERIFY_FLAGS & ~(excluded | bit))), row
        for fewer_excluded in exclude_individual_flags(excluded):
            assert not _all_ok(tx, spent, ALL_SCRIPT_VERIFY_FLAGS & ~fewer_excluded), row


def test_tx_invalid_fails_check_transaction_or_a_script():
    badtx = 0
    for row in _tx_rows("tx_invalid"):
        tx, spent, flag_text = tx_test_case(row)
        if flag_text == "BADTX":
            badtx += 1
            assert check_transaction(tx) is not None, row
            continue
        assert check_transaction(tx) is None, row
        flags = parse_flags(flag_text)
        assert fill_flags(flags) == flags, row
        results = verify_transaction(tx, spent, flags)
        assert any(not ok for ok, _ in results), row
        assert all(err is ScriptError.OK for ok, err in results if ok)
    assert badtx == 9


def test_tx_invalid_flags_are_minimal_and_extendable():
    """Adding any flag keeps the tx invalid; removing any listed flag makes it valid."""
    for row in _tx_rows("tx_invalid"):
        tx, spent, flag_text = tx_test_case(row)
        if flag_text == "BADTX":
            continue
        flags = parse_flags(flag_text)
        for bit in FLAG_NAMES.values():
            assert not _all_ok(tx, spent, fill_flags(flags | bit)), row
        for fewer in exclude_individual_flags(flags):
            assert _all_ok(tx, spent, fewer), (fewer, row)


# (An input-less transaction cannot be written unambiguously, so no row has one;
# test_check_transaction.py covers that rule.)
@pytest.mark.parametrize("reason", ["bad-txns-vout-empty",
                                    "bad-txns-vout-negative", "bad-txns-vout-toolarge",
                                    "bad-txns-txouttotal-toolarge", "bad-txns-inputs-duplicate",
                                    "bad-cb-length", "bad-txns-prevout-null"])
def test_tx_invalid_badtx_rows_cover_each_check_transaction_rule(reason):
    reasons = set()
    for row in _tx_rows("tx_invalid"):
        tx, _, flag_text = tx_test_case(row)
        if flag_text == "BADTX":
            reasons.add(check_transaction(tx))
    assert reason in reasons
