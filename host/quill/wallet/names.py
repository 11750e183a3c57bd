"""Wallet names, checked as Core checks them before any file is touched.

A name is a path below the wallets directory (`a/b` is a wallet in a
subdirectory), so it must be something a file system can hold: valid UTF-8 and
no NUL; as Core, a relative name may not start with `.` or `..`, and a name must
be a normalized path (Core 31: no `.` component, and `..` only at the start of a
relative name). Lengths are the file system's to refuse (quill.wallet.paths), in
Core's words.
"""
from __future__ import annotations

NOT_NORMALIZED = "Wallet name given as a path must be normalized"
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
    parts = encoded.split(b"/")
    if not is_normalized(name):
        raise InvalidWalletName(NOT_NORMALIZED)
    if not name.startswith("/") and parts[0] in (b".", b".."):
        raise InvalidWalletName(RELATIVE_DOTS)


def is_normalized(name: str) -> bool:
    """Whether `name` equals its lexically normal form element by element, as Core compares
    a path with path.lexically_normal() (std::filesystem; repeated slashes do not count)."""
    if name == ".":
        return True
    absolute = name.startswith("/")
    elements = [p for p in name.split("/") if p]
    if "." in elements:
        return False
    if ".." in elements:
        if absolute:
            return False  # the root has no parent: `/..` is `/`
        leading = 0
        while leading < len(elements) and elements[leading] == "..":
            leading += 1
        if ".." in elements[leading:]:
            return False  # `a/..` goes away
        if elements[-1] == ".." and name.endswith("/"):
            return False  # a trailing `..` keeps no separator
    return True
