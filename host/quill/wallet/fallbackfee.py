"""Core's -fallbackfee: the fee rate a wallet pays when fee estimation has no data.

Quill has no fee estimator (on the built-in chain, as a Core node without fee data), so
every funding call without an explicit fee rate estimates and fails; with -fallbackfee it
pays that rate instead, as Core's GetMinimumFeeRate does (wallet/fees.cpp), never below the
required rate. Core reads the option when a wallet is created or loaded: an invalid amount
fails that call, a high one adds a warning (wallet/wallet.cpp).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from quill.consensus import COIN, MAX_MONEY

HIGH_TX_FEE_PER_KB = COIN // 100   # Core's HIGH_TX_FEE_PER_KB (0.01 BTC/kvB)
HIGH_WARNING = ("-fallbackfee is set very high! This is the transaction fee you may pay when fee estimates are "
                "not available.")

# Core's ParseMoney: whole coins (at most 10 digits), then up to 8 decimals; spaces around only
_MONEY = re.compile(r"[ \f\n\r\t\v]*(\d{0,10})(?:\.(\d{0,8}))?[ \f\n\r\t\v]*")


class FallbackFeeError(ValueError):
    """-fallbackfee is not an amount; the message is Core's."""


def parse_money(text: str) -> int | None:
    """Core's ParseMoney (util/moneystr.cpp): satoshis, or None."""
    match = _MONEY.fullmatch(text)
    if match is None or not text.strip():
        return None
    whole, decimals = match.group(1), match.group(2) or ""
    sats = int(whole or "0") * COIN + int(decimals.ljust(8, "0"))
    return sats if sats <= MAX_MONEY else None


@dataclass(frozen=True)
class FallbackFee:
    """The node's -fallbackfee as a wallet sees it: `rate` in sat/kvB (0: disabled, Core's default)."""
    text: str | None = None

    @property
    def rate(self) -> int:
        """sat/kvB; raises FallbackFeeError for what is not an amount."""
        if self.text is None:
            return 0
        sats = parse_money(self.text)
        if sats is None:
            raise FallbackFeeError(f"Invalid amount for -fallbackfee=<amount>: '{self.text}'")
        return sats

    def warnings(self) -> list[str]:
        """What creating or loading a wallet warns about it (raises FallbackFeeError as `rate`)."""
        return [HIGH_WARNING] if self.rate > HIGH_TX_FEE_PER_KB else []

    def fee_rate(self, required: int) -> int | None:
        """Core's GetMinimumFeeRate when estimation has no data: the fallback rate, at least
        `required` (sat/kvB); None when the fallback fee is disabled."""
        try:
            rate = self.rate
        except FallbackFeeError:
            return None   # no wallet was created or loaded with it
        return max(rate, required) if rate else None
