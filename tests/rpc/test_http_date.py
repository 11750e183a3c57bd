"""The Date header's value is written as email.utils.formatdate(usegmt=True) writes it (libevent's
IMF-fixdate), without the email package at start-up."""
import random
from email.utils import formatdate

from quill.rpc.server import _imf_fixdate


def test_imf_fixdate_is_formatdate():
    rng = random.Random(28)
    edges = [0, 59, 86399, 86400, 951782400, 1709164800, 4102444799]
    for now in edges + [rng.randrange(0, 1 << 32) for _ in range(5000)]:
        assert _imf_fixdate(now) == formatdate(now, usegmt=True).encode(), now
