"""The user confirmation (quillfw.signing.confirm, quillfw.signing.confirm_flow, the button
approver) under CPython and MicroPython: the policy rules, its file, the wait
(approve, refuse, timeout, link polled), and its place in the signing methods
(once per session, after the whole transaction, before any signature)."""
import binascii
import os

from quillfw.board.runtime import build_dispatcher
from quillfw.signing import confirm_flow
from quillfw.signing.approvers import LONG_PRESS_MS, ButtonApprover
from quillfw.signing.confirm import APPROVED, AUTO, REFUSED, Confirmation
from quillfw.wire.errors import CONFIRM_TIMEOUT, INVALID_PARAMS, PROTOCOL_ERROR, USER_CANCELLED, DeviceError
from tests.firmware.fwtest import raises, skip

PUB_HASH = binascii.unhexlify("751e76e8199196d454941c45d1b3a323f1433bd6")  # hash160 of 1*G
P2WPKH = b"\x00\x14" + PUB_HASH
SCRIPT_CODE = b"\x76\xa9\x14" + PUB_HASH + b"\x88\xac"
SECRET = bytes(31) + b"\x01"


class User:
    """An approver that answers from a list (None: no answer yet) and records prompts."""
    name = "test"

    def __init__(self, *answers):
        self.answers = list(answers)
        self.prompts = []
        self.ended = 0

    def begin(self, prompt, _now_ms):
        self.prompts.append(prompt)

    def poll(self, _now_ms):
        return self.answers.pop(0) if self.answers else None

    def end(self):
        self.ended += 1


class Ctx:
    def __init__(self):
        self.state = "idle"
        self.states = []
        self.polls = 0

    def poll_link(self):
        self.polls += 1

    def awaiting_user(self, waiting=True):
        self.states.append(waiting)
        self.state = "awaiting_user" if waiting else "busy"


def _temp_path():
    path = "/tmp/quill-confirm-test-%s.json" % binascii.hexlify(os.urandom(6)).decode()
    try:
        open(path, "w").close()
        os.remove(path)
    except OSError:     # the qemu port has no writable filesystem (a board has its flash)
        skip("no writable filesystem on this port")
    return path


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def _conf(user, policy=None, timeout_ms=5000, path=None):
    conf = Confirmation(user, path, timeout_ms)
    if policy is not None:
        conf.policy = policy
    return conf


def _session(conf, inputs=(50000, 70000), outputs=(100000,)):
    conf.reset()
    for a in inputs:
        conf.count(a)
    for a in outputs:
        conf.count(a, output=True)


# ---- the policy ----------------------------------------------------------------------

def test_policy_maps_are_validated():
    assert confirm_flow.make_policy("always") == {"policy": "always"}
    assert confirm_flow.make_policy("above", 0) == {"policy": "above", "amount": 0}
    assert confirm_flow.make_policy("above", 2100000000000000)["amount"] == 2100000000000000
    for policy, amount, why in (("sometimes", None, "always, above or never"),
                                ("above", None, "needs an amount"),
                                ("above", -1, "needs an amount"),
                                ("above", 2100000000000001, "needs an amount"),
                                ("above", True, "needs an amount"),
                                ("never", 5, "only for policy 'above'")):
        with raises(DeviceError, match=why) as r:
            confirm_flow.make_policy(policy, amount)
        assert r.value.code == INVALID_PARAMS


def test_loosening_is_asking_in_fewer_cases():
    m = confirm_flow.make_policy
    always, never = m("always"), m("never")
    low, high = m("above", 1000), m("above", 5000)
    looser = [(always, low), (always, never), (low, never), (low, high), (always, high)]
    for old, new in looser:
        assert confirm_flow.loosens(old, new), (old, new)
        assert not confirm_flow.loosens(new, old), (new, old)
    for same in (always, never, low):
        assert not confirm_flow.loosens(same, same)


def test_the_policy_file_round_trips_and_damage_means_always():
    path = _temp_path()
    try:
        assert Confirmation(None, path).current() == {"policy": "always"}   # never stored
        confirm_flow.save_policy(path, {"policy": "above", "amount": 12345})
        assert Confirmation(None, path).current() == {"policy": "above", "amount": 12345}
        for damaged in ('{"policy": "above"}', "not json", '["never"]', '{"policy": "sometimes"}'):
            with open(path, "w") as f:
                f.write(damaged)
            assert Confirmation(None, path).current() == {"policy": "always"}, damaged
    finally:
        _remove(path)


# ---- when a signing session asks -----------------------------------------------------

def test_always_asks_once_per_session_and_waits_visibly():
    user = User(None, None, APPROVED)
    conf, ctx = _conf(user), Ctx()
    _session(conf)
    conf.before_signature(ctx, 1)
    assert user.prompts == ["Sign: 2 inputs 0.00120000 BTC, 1 outputs 0.00100000 BTC?"]
    assert ctx.states == [True, False] and ctx.polls == 2 and user.ended == 1
    conf.before_signature(ctx, 1)            # the same session: confirmed already
    assert len(user.prompts) == 1
    conf.reset()                             # a new session asks again
    user.answers = [APPROVED]
    conf.before_signature(ctx, 1)
    assert len(user.prompts) == 2


def test_refusal_and_timeout_are_their_own_errors():
    conf, ctx = _conf(User(REFUSED)), Ctx()
    _session(conf)
    with raises(DeviceError, match="Signing refused on the device") as r:
        conf.before_signature(ctx, 1)
    assert r.value.code == USER_CANCELLED and not conf.confirmed
    assert ctx.states == [True, False]
    user = User()                            # never answers
    conf, ctx = _conf(user, timeout_ms=60), Ctx()
    _session(conf)
    with raises(DeviceError, match="Confirmation timed out on the device") as r:
        conf.before_signature(ctx, 1)
    assert r.value.code == CONFIRM_TIMEOUT and ctx.polls >= 2 and user.ended == 1
    assert ctx.states == [True, False]


def test_above_compares_the_larger_total_and_never_asks_nothing():
    above = confirm_flow.make_policy("above", 120000)
    for inputs, outputs, asked in (((50000, 70000), (100000,), False),    # 120000: not above
                                   ((50000, 70001), (100000,), True),     # the inputs' total
                                   ((1000,), (120001,), True)):           # the outputs' total
        user = User(APPROVED)
        conf = _conf(user, above)
        _session(conf, inputs, outputs)
        conf.before_signature(Ctx(), 1)
        assert bool(user.prompts) == asked, (inputs, outputs)
    user = User(APPROVED)
    conf = _conf(user, confirm_flow.make_policy("never"))
    _session(conf, (10 ** 15,), (10 ** 15,))
    conf.before_signature(Ctx(), 0)
    assert user.prompts == []


def test_signatures_not_committing_to_the_outputs_ask_whatever_the_policy():
    for hash_type in (2, 3, 0x82, 0x83):
        for policy in (confirm_flow.make_policy("never"), confirm_flow.make_policy("above", 10 ** 9)):
            user = User(APPROVED)
            conf = _conf(user, policy)
            _session(conf)
            conf.before_signature(Ctx(), hash_type)
            assert len(user.prompts) == 1 and "outputs not committed" in user.prompts[0]
    for hash_type in (0, 1, 0x81):           # ALL / DEFAULT commit every output
        user = User(APPROVED)
        conf = _conf(user, confirm_flow.make_policy("never"))
        _session(conf)
        conf.before_signature(Ctx(), hash_type)
        assert user.prompts == []


def test_no_approver_refuses_what_the_policy_asks():
    conf = _conf(None)
    _session(conf)
    with raises(DeviceError, match="refused") as r:
        conf.before_signature(Ctx(), 1)
    assert r.value.code == USER_CANCELLED
    assert conf.info()["confirmation"]["approver"] == "none"


def test_the_emulator_auto_approver_approves_without_waiting():
    conf, ctx = _conf(AUTO), Ctx()
    _session(conf)
    conf.before_signature(ctx, 1)
    assert conf.confirmed and ctx.states == []
    assert conf.info()["confirmation"] == {"policy": "always", "approver": "auto",
                                           "timeout_ms": 5000}


# ---- changing the policy -------------------------------------------------------------

def test_tightening_needs_no_confirmation_loosening_does():
    path = _temp_path()
    try:
        user = User()
        conf, ctx = _conf(user, confirm_flow.make_policy("never"), path=path), Ctx()
        assert conf.set_policy(ctx, {"policy": "above", "amount": 5000}) == \
            {"policy": "above", "amount": 5000}
        assert conf.set_policy(ctx, {"policy": "above", "amount": 4000})["amount"] == 4000
        assert conf.set_policy(ctx, {"policy": "always"}) == {"policy": "always"}
        assert user.prompts == [] and ctx.states == []
        user.answers = [REFUSED]
        with raises(DeviceError, match="Policy change refused on the device") as r:
            conf.set_policy(ctx, {"policy": "never"})
        assert r.value.code == USER_CANCELLED
        assert user.prompts == ["Change policy from confirm always to confirm never?"]
        assert Confirmation(None, path).current() == {"policy": "always"}   # not stored
        user.answers = [APPROVED]
        assert conf.set_policy(ctx, {"policy": "above", "amount": 250000000}) == \
            {"policy": "above", "amount": 250000000}
        assert user.prompts[-1] == "Change policy from confirm always to confirm above 2.50000000 BTC?"
        assert Confirmation(None, path).current() == {"policy": "above", "amount": 250000000}
        assert conf.info()["confirmation"]["amount"] == 250000000
    finally:
        _remove(path)


# ---- through the signing methods -----------------------------------------------------

def _call(dispatcher, ctx, method, params=None):
    request = {"id": "t", "method": method}
    if params is not None:
        request["params"] = params
    return dispatcher.dispatch(ctx, request)


def _begin(d, ctx, n_outputs=1):
    assert "result" in _call(d, ctx, "sign_begin", {"version": 2, "locktime": 0, "n_inputs": 1,
                                                    "n_outputs": n_outputs,
                                                    "algorithms": ["legacy", "segwit_v0"]})
    assert _call(d, ctx, "sign_add_key", {"secret": SECRET})["result"] == 0
    txin = [bytes(32), 0, 0xFFFFFFFF, 50000, P2WPKH]
    token = _call(d, ctx, "sign_add_inputs", {"inputs": [txin]})["result"][0]
    return txin, token


def _sign(d, ctx, txin, token):
    return _call(d, ctx, "sign_segwit_v0", {"input_index": 0, "txin": list(txin),
                                            "txin_token": token, "script_code": SCRIPT_CODE,
                                            "hash_type": 1, "key_index": 0})


def test_no_signature_before_the_whole_transaction_and_its_confirmation():
    user = User()
    d, ctx = build_dispatcher("test", approver=user), Ctx()
    txin, token = _begin(d, ctx)
    early = _sign(d, ctx, txin, token)       # the output is still missing
    assert early["error"]["code"] == PROTOCOL_ERROR and user.prompts == []
    d.reset_session()                        # as the server does after an error reply
    txin, token = _begin(d, ctx)
    _call(d, ctx, "sign_add_outputs", {"outputs": [[40000, P2WPKH]]})
    user.answers = [REFUSED]
    refused = _sign(d, ctx, txin, token)
    assert refused["error"]["code"] == USER_CANCELLED and "result" not in refused
    assert user.prompts == ["Sign: 1 inputs 0.00050000 BTC, 1 outputs 0.00040000 BTC?"]
    d.reset_session()
    again = _sign(d, ctx, txin, token)       # the refusal wiped the session
    assert again["error"]["data"] == "out_of_order" and len(user.prompts) == 1


def test_each_transaction_is_confirmed_on_its_own():
    user = User(APPROVED)
    d, ctx = build_dispatcher("test", approver=user), Ctx()
    for n in range(2):
        txin, token = _begin(d, ctx)
        _call(d, ctx, "sign_add_outputs", {"outputs": [[40000, P2WPKH]]})
        assert len(_sign(d, ctx, txin, token)["result"]) > 64
        assert len(_sign(d, ctx, txin, token)["result"]) > 64   # same session: no new question
        assert _call(d, ctx, "sign_end")["result"] is None
        assert len(user.prompts) == n + 1
        user.answers = [APPROVED]
    # a legacy signature asks before its second pass starts
    user.answers = [REFUSED]
    txin, token = _begin(d, ctx)
    _call(d, ctx, "sign_add_outputs", {"outputs": [[40000, P2WPKH]]})
    reply = _call(d, ctx, "sign_legacy_begin", {"input_index": 0, "script_code": SCRIPT_CODE,
                                                "hash_type": 1, "key_index": 0})
    assert reply["error"]["code"] == USER_CANCELLED and len(user.prompts) == 3


def test_get_info_reports_the_policy_and_set_confirm_policy_changes_it():
    user = User()
    d, ctx = build_dispatcher("test", approver=user, confirm_timeout_ms=777), Ctx()
    info = _call(d, ctx, "get_info")["result"]
    assert info["confirmation"] == {"policy": "always", "approver": "test", "timeout_ms": 777}
    assert "set_confirm_policy" in info["methods"]
    reply = _call(d, ctx, "set_confirm_policy", {"policy": "never"})
    assert reply["error"]["code"] == CONFIRM_TIMEOUT     # loosening waited for the user
    assert _call(d, ctx, "get_info")["result"]["confirmation"]["policy"] == "always"
    bad = _call(d, ctx, "set_confirm_policy", {"policy": "above"})
    assert bad["error"]["code"] == INVALID_PARAMS


# ---- the board's button --------------------------------------------------------------

class FakeButton:
    def __init__(self):
        self.down = False

    def pressed(self):
        return self.down


class FakeLed:
    def __init__(self):
        self.lit = None

    def on(self):
        self.lit = True

    def off(self):
        self.lit = False


def _press(approver, button, start, held_ms, step=20):
    """Press for held_ms then release; the answers seen (None dropped)."""
    answers = []
    t = start
    button.down = True
    while t < start + held_ms:
        answers.append(approver.poll(t))
        t += step
    button.down = False
    answers.append(approver.poll(t))
    return [a for a in answers if a is not None], t + step


def test_button_short_press_approves_on_release_long_press_refuses():
    button, led = FakeButton(), FakeLed()
    approver = ButtonApprover(button, led)
    approver.begin("Sign?", 0)
    assert approver.poll(0) is None and led.lit is True       # armed: button up, LED on
    assert approver.poll(260) is None and led.lit is False    # blinking
    answers, t = _press(approver, button, 300, 200)
    assert answers == [APPROVED]
    approver.begin("Sign?", t)
    approver.poll(t)
    answers, t = _press(approver, button, t + 20, LONG_PRESS_MS + 100)
    assert answers[0] == REFUSED
    approver.end()
    assert led.lit is False


def test_button_held_from_before_or_bouncing_does_not_approve():
    button = FakeButton()
    approver = ButtonApprover(button)
    button.down = True                       # stuck, or pressed before the question
    approver.begin("Sign?", 0)
    for t in range(0, 1000, 20):
        assert approver.poll(t) is None
    button.down = False
    assert approver.poll(1000) is None       # released: now armed, not approved
    answers, t = _press(approver, button, 1020, 10, step=10)   # a 10 ms bounce
    assert answers == []
    answers, t = _press(approver, button, t, 100)
    assert answers == [APPROVED]


def test_sign_begin_starts_over_from_an_unfinished_session():
    """A host whose sign_abort never reached the device (its link dropped mid-session and
    was opened again) starts over with sign_begin: the session left ready to sign is
    wiped, its key and its confirmation with it, where it was refused as 'unexpected
    message in state ready'."""
    user = User(APPROVED, APPROVED)
    d, ctx = build_dispatcher("test", approver=user), Ctx()
    txin, token = _begin(d, ctx)
    _call(d, ctx, "sign_add_outputs", {"outputs": [[40000, P2WPKH]]})
    assert "result" in _sign(d, ctx, txin, token)
    txin, token = _begin(d, ctx)            # no sign_end, no sign_abort: its key is index 0 again
    _call(d, ctx, "sign_add_outputs", {"outputs": [[40000, P2WPKH]]})
    assert "result" in _sign(d, ctx, txin, token)
    assert len(user.prompts) == 2           # the new session is confirmed on its own
