"""The MCU benchmark's ECDSA figures are at Core's grinding rate and each board's clock
(quill.emulator.mcu_bench): its grind sample takes 2 nonces per signature on average
(within 5 %), its 1-nonce and 2-nonce pairs take exactly that many (checked against
libsecp256k1's own signatures through coincurve: the first nonce's R is high exactly
when Core grinds), and milliseconds use boards/<board>/board.json's clock_hz. No QEMU."""
import coincurve
import pytest

from quill.emulator import mcu_bench


def _first_nonce_r_is_high(secret: bytes, msg: bytes) -> bool:
    """libsecp256k1's signature with no extra entropy (Core's first try): R needs 33 DER bytes."""
    der = coincurve.PrivateKey(secret).sign(msg, hasher=None)
    return der[3] == 33


def test_the_grind_sample_takes_two_nonces_on_average():
    sample = mcu_bench.grinding_sample()
    assert len(sample) >= mcu_bench.MIN_SAMPLE
    assert abs(mcu_bench.mean_nonces(sample) - 2) <= 0.1
    high = sum(_first_nonce_r_is_high(k, m) for k, m in sample)
    assert high == sum(mcu_bench.nonce_attempts(k, m) > 1 for k, m in sample)
    assert mcu_bench.CASES["ecdsa_sign_grind"][2] == len(sample)


@pytest.mark.parametrize("nonces", [1, 2])
def test_the_fixed_pairs_take_exactly_their_nonces(nonces):
    pairs = mcu_bench.pairs_taking(nonces, 4)
    assert [mcu_bench.nonce_attempts(k, m) for k, m in pairs] == [nonces] * 4
    assert all(_first_nonce_r_is_high(k, m) == (nonces > 1) for k, m in pairs)


def test_the_old_grind_case_never_ground():
    """The key and message the benchmark signed before: one nonce, no grinding at all."""
    assert mcu_bench.nonce_attempts(bytes(31) + b"\x07", bytes(range(32))) == 1


def test_milliseconds_use_each_boards_clock():
    assert mcu_bench.clock_hz("qemu-m0plus") == 125_000_000     # the Pico
    assert mcu_bench.clock_hz("qemu-m4") == 168_000_000         # the pyboard
    # 1.5 cycles per instruction at 125 MHz: 125e6 / 1.5 instructions take one second
    assert mcu_bench.milliseconds("qemu-m0plus", 125_000_000 / 1.5) == pytest.approx(1000)
    assert mcu_bench.milliseconds("qemu-m4", 168_000_000 / 1.3) == pytest.approx(1000)
    one_more, two = mcu_bench.attempt_cost({"ecdsa_sign_1_nonce": 3, "ecdsa_sign_2_nonces": 5})
    assert (one_more, two) == (2, 5)
