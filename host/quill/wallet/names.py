"""Wallet names, checked as Core checks them before any file is touched.

A name is a path below the wallets directory (`a/b` is a wallet in a
subdirectory), so it must be something a file system can hold: valid UTF-8,
no NUL, no component longer than NAME_MAX bytes, and, as Core, a relative name
may not start with `.` or `..` (nor, here, climb out with `..` anywhere).
"""
from __future__ import annotations

NAME_MAX = 255     # bytes in one path component (Linux, macOS)
PATH_MAX = 4096

RELATIVE_DOTS = ("Wallet name given as a relative path cannot begin with ./ or ../, for wallets not in the "
                 "walletdir, please use an absolute path.")


class InvalidWalletName(ValueError):
    """The name cannot name a wallet; `empty` tells Core's -8 case apart."""

    def __init__(self, message: str, empty: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.empty = empty


def check_wallet_name(name: str, allow_empty: bool = True) -> None:
    if name == "":
        if allow_empty:
            return
        raise InvalidWalletName("Wallet name cannot be empty", empty=True)
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidWalletName("Wallet name is not valid UTF-8") from None
    if b"\x00" in encoded:
        raise InvalidWalletName("Wallet name cannot contain a NUL character")
    if len(encoded) > PATH_MAX:
        raise InvalidWalletName(f"Wallet name is too long ({len(encoded)} bytes; at most {PATH_MAX})")
    parts = encoded.split(b"/")
    longest = max(len(p) for p in parts)
    if longest > NAME_MAX:
        raise InvalidWalletName(f"Wallet name is too long ({longest} bytes in one path component; "
                                f"at most {NAME_MAX})")
    if not name.startswith("/") and parts[0] in (b".", b".."):
        raise InvalidWalletName(RELATIVE_DOTS)
    if b".." in parts:
        raise InvalidWalletName(RELATIVE_DOTS)
