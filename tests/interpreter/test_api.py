"""ScriptError texts, flag sets, CheckTransaction rules and robustness on garbage."""
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quill.tx.interpreter import (
    BaseSignatureChecker,
    cast_to_bool,
    encode_script_num,
    eval_script,
    find_and_delete,
    script_num,
    verify_script,
)
from quill.tx.script_error import ScriptError
from quill.tx.script_flags import (
    ALL_SCRIPT_VERIFY_FLAGS,
    FLAG_NAMES,
    MANDATORY_SCRIPT_VERIFY_FLAGS,
    SCRIPT_VERIFY_CLEANSTACK,
    SCRIPT_VERIFY_P2SH,
    SCRIPT_VERIFY_WITNESS,
    STANDARD_SCRIPT_VERIFY_FLAGS,
    format_flags,
    parse_flags,
)
from quill.tx.transaction import OutPoint, Transaction, TxIn, TxOut
from quill.tx.verify import MAX_MONEY, check_transaction, verify_input
from tests.kit.toolchains import reference_path


def _reference_table():
    path = reference_path("core-rpc.md")
    rows = {}
    text = path.read_text(encoding="utf-8")
    section = text[text.index("`ScriptErrorString` values"):]
    for name, string in re.findall(r"^\| ([A-Z0-9_]+(?: / other)?) \| `([^`]*)`", section, re.M):
        rows[name] = string
    return rows


def test_error_strings_match_core_script_error_string():
    table = _reference_table()
    assert len(table) >= 50
    for name, string in table.items():
        err = ScriptError.UNKNOWN if name.startswith("UNKNOWN") else ScriptError[name]
        assert err.message == string, name
    covered = {ScriptError.UNKNOWN if n.startswith("UNKNOWN") else ScriptError[n] for n in table}
    assert covered == set(ScriptError)


def test_test_names():
    assert ScriptError.from_test_name("NULLFAIL") is ScriptError.SIG_NULLFAIL
    assert ScriptError.from_test_name("UNKNOWN_ERROR") is ScriptError.UNKNOWN
    assert ScriptError.SIG_NULLFAIL.test_name == "NULLFAIL"
    assert ScriptError.from_test_name("SIG_DER") is ScriptError.SIG_DER
    with pytest.raises(KeyError):
        ScriptError.from_test_name("NOT_AN_ERROR")


def test_policy_flag_sets_are_cores():
    assert format_flags(MANDATORY_SCRIPT_VERIFY_FLAGS) == \
        "P2SH,DERSIG,NULLDUMMY,CHECKLOCKTIMEVERIFY,CHECKSEQUENCEVERIFY,WITNESS,TAPROOT"
    # Standard = every flag but SIGPUSHONLY (core-rpc.md §4.9 lists the same 20).
    assert STANDARD_SCRIPT_VERIFY_FLAGS == ALL_SCRIPT_VERIFY_FLAGS & ~FLAG_NAMES["SIGPUSHONLY"]
    assert parse_flags("") == parse_flags("NONE") == 0
    assert parse_flags(format_flags(STANDARD_SCRIPT_VERIFY_FLAGS)) == STANDARD_SCRIPT_VERIFY_FLAGS
    with pytest.raises(ValueError):
        parse_flags("P2SH,BOGUS")
    with pytest.raises(ValueError):
        verify_script(b"", b"\x51", [], SCRIPT_VERIFY_WITNESS, BaseSignatureChecker())
    with pytest.raises(ValueError):
        verify_script(b"", b"\x51", [], SCRIPT_VERIFY_CLEANSTACK | SCRIPT_VERIFY_P2SH,
                      BaseSignatureChecker())


def test_script_numbers():
    for v in (0, 1, -1, 127, 128, -128, 255, -255, 256, 2**31 - 1, -(2**31 - 1), 2**39 - 1):
        assert script_num(encode_script_num(v), True, 5) == v
    assert encode_script_num(255) == b"\xff\x00"
    assert encode_script_num(-255) == b"\xff\x80"
    assert not cast_to_bool(b"\x00\x80") and cast_to_bool(b"\x80\x00") and not cast_to_bool(b"")


def test_find_and_delete_matches_only_at_opcode_boundaries():
    sig_push = b"\x02\xab\xcd"
    assert find_and_delete(b"\x51" + sig_push + b"\x52", sig_push) == (b"\x51\x52", 1)
    assert find_and_delete(sig_push + sig_push, sig_push) == (b"", 2)
    # Inside another push the same bytes stay.
    inner = b"\x04\x02\xab\xcd\x00"
    assert find_and_delete(inner, sig_push) == (inner, 0)


def test_eval_script_alone():
    stack = [b"\x02", b"\x03"]
    assert eval_script(stack, b"\x93\x55\x87", 0, BaseSignatureChecker()) == (True, ScriptError.OK)
    assert stack == [b"\x01"]
    assert eval_script([], b"\x93", 0, BaseSignatureChecker()) == \
        (False, ScriptError.INVALID_STACK_OPERATION)


def _tx(vin, vout):
    return Transaction(2, vin, vout, 0)


def _in(n, txid=b"\x11" * 32, script_sig=b""):
    return TxIn(OutPoint(txid, n), script_sig)


@pytest.mark.parametrize("tx, reason", [
    (_tx([], [TxOut(1, b"")]), "bad-txns-vin-empty"),
    (_tx([_in(0)], []), "bad-txns-vout-empty"),
    (_tx([_in(0)], [TxOut(-1, b"")]), "bad-txns-vout-negative"),
    (_tx([_in(0)], [TxOut(MAX_MONEY + 1, b"")]), "bad-txns-vout-toolarge"),
    (_tx([_in(0)], [TxOut(MAX_MONEY, b""), TxOut(1, b"")]), "bad-txns-txouttotal-toolarge"),
    (_tx([_in(0), _in(0)], [TxOut(1, b"")]), "bad-txns-inputs-duplicate"),
    (_tx([TxIn(OutPoint(), b"\x00")], [TxOut(1, b"")]), "bad-cb-length"),
    (_tx([TxIn(OutPoint(), b"\x00" * 101)], [TxOut(1, b"")]), "bad-cb-length"),
    (_tx([_in(0), TxIn(OutPoint(), b"")], [TxOut(1, b"")]), "bad-txns-prevout-null"),
    (_tx([_in(0)], [TxOut(0, b"\x6a" * 999_990)]), "bad-txns-oversize"),
])
def test_check_transaction_reasons(tx, reason):
    assert check_transaction(tx) == reason


def test_check_transaction_accepts_boundaries():
    assert check_transaction(_tx([_in(0), _in(1)], [TxOut(MAX_MONEY, b"")])) is None
    assert check_transaction(_tx([TxIn(OutPoint(), b"\x00" * 2)], [TxOut(0, b"")])) is None
    assert check_transaction(_tx([TxIn(OutPoint(), b"\x00" * 100)], [TxOut(0, b"")])) is None


_FLAG_SETS = st.sampled_from([0, MANDATORY_SCRIPT_VERIFY_FLAGS, STANDARD_SCRIPT_VERIFY_FLAGS,
                              ALL_SCRIPT_VERIFY_FLAGS, SCRIPT_VERIFY_P2SH])
_SCRIPTS = st.one_of(st.binary(max_size=80),
                     st.lists(st.sampled_from([b"\x00", b"\x51", b"\x63", b"\x67", b"\x68",
                                               b"\x76", b"\xa9", b"\x87", b"\xac", b"\xae",
                                               b"\xba", b"\x50", b"\x02\x01\x02", b"\x4c"]),
                              max_size=20).map(b"".join))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script_sig=_SCRIPTS, script_pubkey=st.one_of(
           _SCRIPTS, st.binary(min_size=20, max_size=40).map(lambda p: bytes((0, len(p))) + p),
           st.binary(min_size=32, max_size=32).map(lambda p: b"\x51\x20" + p)),
       witness=st.lists(st.binary(max_size=70), max_size=4), flags=_FLAG_SETS)
def test_garbage_never_raises(script_sig, script_pubkey, witness, flags):
    tx = _tx([TxIn(OutPoint(b"\x22" * 32, 0), script_sig, 0, witness)], [TxOut(1, b"")])
    ok, err = verify_input(tx, 0, [TxOut(5, script_pubkey)], flags)
    assert isinstance(err, ScriptError) and ok == (err is ScriptError.OK)
