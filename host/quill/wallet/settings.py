"""settings.json, read as Core reads it at start-up (ReadSettings, then the -wallet setting as its
wallet init reads it). A file that is not JSON, whose top level is not an object, or that names
a key twice refuses start-up, as does a `wallet` value that is neither a string nor a list of
strings; a string names one wallet. Each message is Core's.
"""
from __future__ import annotations

import json
from typing import Any

NOT_READ = "Settings file could not be read:\n- "
INVALID_WALLET = ("Invalid value detected for '-wallet' or '-nowallet'. '-wallet' requires a string value, "
                  "while '-nowallet' accepts only '1' to disable all wallets")


class SettingsError(Exception):
    """Start-up cannot go on: Core's message, shown as `Error: <message>`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Repeated(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Repeated(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def read_settings(path: str) -> dict[str, Any]:
    """The settings as an object ({} when there is no file); SettingsError as Core words it."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return {}
    except OSError:
        raise SettingsError(f"{NOT_READ}Failed reading settings file {path}") from None
    try:
        value = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_repeats, parse_constant=_no_constant)
    except _Repeated as e:
        raise SettingsError(f"{NOT_READ}Found duplicate key {e.key} in settings file {path}") from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise SettingsError(f"{NOT_READ}Settings file {path} does not contain valid JSON. This may be caused by "
                            "a crash, power loss, full disk, or storage error, and can be fixed by removing the "
                            "file, which will reset settings to default values.") from None
    if not isinstance(value, dict):
        shown = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        raise SettingsError(f"{NOT_READ}Found non-object value {shown} in settings file {path}")
    return value


def wallet_names(settings: dict[str, Any]) -> list[str]:
    """The wallets to load at start-up: one string, or a list of strings, else SettingsError."""
    value = settings.get("wallet")
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return list(value)
    raise SettingsError(INVALID_WALLET)
