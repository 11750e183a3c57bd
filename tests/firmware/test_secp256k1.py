"""quillfw.crypto.secp256k1: group arithmetic, the comb table, encodings, key checks.

Expected public keys come from the shared vectors (BIP340, BIP341, BIP143);
the comb multiplication is checked against the independent variable-base
multiplication and group identities.
"""
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import sha256
from tests.firmware import fwtest

G2_X = 0xC6047F9441ED7D6D3045406E95C07CD85C778E4B8CEF3CA7ABAC09B95C709EE5  # SEC 2 / well-known 2G


def _pseudo_random_scalars(count, seed):
    out = []
    h = seed
    for _ in range(count):
        h = sha256(h)
        out.append(int.from_bytes(h, "big"))
    return out


def test_inverse_is_extended_euclid_not_pow():
    # pow(x, -1, m) silently returns 0 on MicroPython; the inverse must hold anyway.
    assert ec.inverse(3, 7) == 5
    for m in (ec.P, ec.N):
        for a in [1, 2, 3, m - 1, m - 2, (1 << 128) + 1, m + 5] + _pseudo_random_scalars(20, b"inv"):
            inv = ec.inverse(a, m)
            assert 0 < inv < m
            assert a * inv % m == 1
    with fwtest.raises(ZeroDivisionError):
        ec.inverse(ec.N, ec.N)


def _code_lines(text):
    """Source lines outside docstrings, with # comments cut off."""
    in_doc = False
    for line in text.split("\n"):
        quotes = line.count('"""')
        if in_doc or quotes:
            if quotes % 2:
                in_doc = not in_doc
            continue
        yield line.split("#")[0]


def test_no_firmware_module_calls_pow_with_a_negative_exponent():
    import os

    import quillfw
    f = quillfw.__file__
    folder = f[:f.rfind("/")] if "/" in f else "."
    offenders = []
    for name in os.listdir(folder):
        if not name.endswith(".py"):
            continue
        with open(folder + "/" + name) as src:
            text = src.read()
        for line in _code_lines(text):
            start = line.find("pow(")
            while start >= 0:
                call = line[start:]
                if ", -" in call or ",-" in call:
                    offenders.append(name + ": " + line.strip())
                start = line.find("pow(", start + 4)
    assert not offenders, offenders


def test_small_multiples_of_g():
    assert ec.point_mul_g(1) == ec.G
    assert ec.point_mul_g(2)[0] == G2_X
    assert ec.point_mul_g(2) == ec.point_add(ec.G, ec.G)
    assert ec.point_mul_g(ec.N - 1) == ec.point_neg(ec.G)
    assert ec.point_mul_g(0) is None
    assert ec.point_mul_g(ec.N) is None
    assert ec.point_mul_g(ec.N + 2) == ec.point_mul_g(2)


def test_comb_matches_variable_base_multiplication():
    edges = [1, 2, 3, 15, 16, 17, 255, 256, (1 << 32) - 1, 1 << 32, (1 << 32) + 1,
             1 << 31, 1 << 63, 1 << 64, 1 << 95, 1 << 128, 1 << 224, 1 << 255,
             (1 << 256) - 1, ec.N - 1, ec.N - 2, (ec.N - 1) // 2, (ec.N + 1) // 2,
             ec.N - (1 << 32), int("80000001" * 8, 16)]
    for k in edges + _pseudo_random_scalars(25, b"comb"):
        expected = ec.point_mul(ec.G, k)
        assert ec.point_mul_g(k) == expected, hex(k)
        assert ec.is_on_curve(expected)


def test_point_mul_identities():
    for k in _pseudo_random_scalars(4, b"ident"):
        p = ec.point_mul_g(k)
        assert ec.point_add(p, ec.point_neg(p)) is None
        assert ec.point_add(p, p) == ec.point_mul(p, 2)
        assert ec.point_add(None, p) == p and ec.point_add(p, None) == p
        # (a*b)*G computed two ways
        b = (k >> 7) % ec.N
        assert ec.point_mul(p, b) == ec.point_mul_g(k * b)
        assert ec.point_mul(p, ec.N) is None


def _vector_keys():
    """(secret32, compressed pubkey or None, xonly or None) from the shared vectors."""
    keys = []
    with open(fwtest.vector_path("bips/bip340_test_vectors.csv")) as f:
        for line in f.read().split("\n")[1:]:
            cols = line.strip().split(",")
            if len(cols) > 2 and cols[1]:
                keys.append((bytes.fromhex(cols[1]), None, bytes.fromhex(cols[2])))
    bip341 = fwtest.load_json("core/bip341_wallet_vectors.json")
    for case in bip341["keyPathSpending"][0]["inputSpending"]:
        keys.append((bytes.fromhex(case["given"]["internalPrivkey"]), None,
                     bytes.fromhex(case["intermediary"]["internalPubkey"])))
    bip143 = fwtest.load_json("bips/bip143_examples.json")
    for example in bip143["examples"]:
        for txin in example["inputs"]:
            holders = [txin] + txin.get("signatures", [])
            for h in holders:
                if h.get("private_key") and h.get("public_key"):
                    keys.append((bytes.fromhex(h["private_key"]), bytes.fromhex(h["public_key"]), None))
    return keys


def test_public_keys_from_vectors():
    keys = _vector_keys()
    assert len(keys) >= 20
    for secret, compressed, xonly in keys:
        if compressed is not None:
            assert ec.pubkey_from_secret(secret) == compressed
            full = ec.pubkey_from_secret(secret, compressed=False)
            assert len(full) == 65 and full[1:33] == compressed[1:]
            assert ec.sec_decode(full) == ec.sec_decode(compressed)
        if xonly is not None:
            x, odd = ec.xonly_from_secret(secret)
            assert x == xonly
            assert ec.pubkey_from_secret(secret)[0] == (3 if odd else 2)


def test_sec_decode_roundtrip_and_rejections():
    p = ec.point_mul_g(0x1234567890ABCDEF)
    for compressed in (True, False):
        assert ec.sec_decode(ec.sec_encode(p, compressed)) == p
    q = ec.point_neg(p)
    assert ec.sec_decode(ec.sec_encode(q)) == q
    good = ec.sec_encode(p, False)
    bad_y = good[:64] + bytes((good[64] ^ 1,))
    x_ge_p = b"\x02" + (ec.P + 1).to_bytes(32, "big")
    not_on_curve = b"\x02" + (5).to_bytes(32, "big")  # 5^3 + 7 = 132 is not a square mod P
    for bad in (b"", b"\x02", good[:33], b"\x04" + good[1:33], b"\x05" + good[1:33],
                b"\x06" + good[1:], bad_y, x_ge_p, not_on_curve, good + b"\x00"):
        with fwtest.raises(ValueError):
            ec.sec_decode(bad)


def test_lift_x():
    assert ec.lift_x(ec.GX) == ec.G  # G's y is even
    assert ec.lift_x(5) is None
    assert ec.lift_x(ec.P) is None
    assert ec.lift_x(-1) is None
    x = ec.point_mul_g(7)[0]
    y = ec.lift_x(x)[1]
    assert y & 1 == 0 and ec.is_on_curve((x, y))


def test_secret_range_errors_never_echo_the_secret():
    for value in (0, ec.N, ec.N + 1, (1 << 256) - 1):
        secret = value.to_bytes(32, "big")
        with fwtest.raises(ValueError, match="secret key out of range") as r:
            ec.scalar_from_secret(secret)
        assert secret.hex() not in str(r.value)
        with fwtest.raises(ValueError):
            ec.pubkey_from_secret(secret)
    with fwtest.raises(ValueError, match="32 bytes"):
        ec.scalar_from_secret(b"\x01" * 31)
    assert ec.scalar_from_secret((ec.N - 1).to_bytes(32, "big")) == ec.N - 1


def test_key_cache_returns_correct_points_past_its_capacity():
    ec.clear_key_cache()
    secrets = [(i * 0x10001 + 3).to_bytes(32, "big") for i in range(20)]
    for _ in range(2):
        for s in secrets:
            d, point = ec.keypair(s)
            assert d == int.from_bytes(s, "big")
            assert point == ec.point_mul(ec.G, d)
    ec.clear_key_cache()
    assert ec.keypair(secrets[0])[1] == ec.point_mul(ec.G, 3)
