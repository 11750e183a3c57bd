"""Where the third-party toolchains and vectors live, and what happens when one is absent.

Tests find each thing through an environment variable first, then at its place in
``../shared`` beside the repository (see ``../shared/toolchains/README.md``). When it is
absent a test skips with a clear reason; with ``QUILL_REQUIRE_TOOLCHAINS=1`` (set by
``.ci/run``) it fails instead, so a green CI always means every such test ran.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
REQUIRE_ENV = "QUILL_REQUIRE_TOOLCHAINS"


def required() -> bool:
    """True when an absent toolchain or vector folder must fail the run (CI)."""
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def unavailable(reason: str) -> None:
    """Skip the current test, or fail it when toolchains are required."""
    if required():
        pytest.fail(f"{reason} ({REQUIRE_ENV} is set, so this cannot be skipped)", pytrace=False)
    pytest.skip(reason)


def _locate(env: str, default: Path) -> Path:
    value = os.environ.get(env)
    return Path(value) if value else default


def bitcoind_path() -> Path:
    """Bitcoin Core's bitcoind: $BITCOIND, then ../shared/toolchains/bitcoin-core/bin/bitcoind."""
    path = _locate("BITCOIND", SHARED / "toolchains" / "bitcoin-core" / "bin" / "bitcoind")
    if not (path.is_file() and os.access(path, os.X_OK)):
        unavailable(f"Bitcoin Core's bitcoind not found at {path} (set BITCOIND)")
    return path


def bitcoin_cli_path() -> Path:
    """Bitcoin Core's bitcoin-cli: $BITCOIN_CLI, then beside bitcoind in ../shared/toolchains."""
    path = _locate("BITCOIN_CLI", SHARED / "toolchains" / "bitcoin-core" / "bin" / "bitcoin-cli")
    if not (path.is_file() and os.access(path, os.X_OK)):
        unavailable(f"Bitcoin Core's bitcoin-cli not found at {path} (set BITCOIN_CLI)")
    return path


def bitcoind_zmq_path() -> Path:
    """The ZMQ build of bitcoind: $BITCOIND_ZMQ, then ../shared/toolchains/bitcoin-core/bin-zmq/bitcoind.
    It links libzmq.so.5, which `make test` installs (apt-get install libzmq5) when it can."""
    path = _locate("BITCOIND_ZMQ", SHARED / "toolchains" / "bitcoin-core" / "bin-zmq" / "bitcoind")
    if not (path.is_file() and os.access(path, os.X_OK)):
        unavailable(f"Bitcoin Core's ZMQ bitcoind not found at {path} (set BITCOIND_ZMQ)")
    probe = subprocess.run([str(path), "-version"], capture_output=True, text=True)
    if probe.returncode != 0:
        unavailable(f"{path} does not run ({probe.stderr.strip()[:200]}); install libzmq5")
    return path


def micropython_source_archive() -> Path:
    """MicroPython's source: $MICROPYTHON_SRC (a folder) or the archive in ../shared/toolchains."""
    env = os.environ.get("MICROPYTHON_SRC")
    path = Path(env) if env else SHARED / "toolchains" / "micropython" / "micropython-src.tar.gz"
    if not path.exists():
        unavailable(f"MicroPython source not found at {path} (set MICROPYTHON_SRC)")
    return path


def secp256k1_source_archive() -> Path:
    """libsecp256k1's source: $SECP256K1_SRC (a folder) or the archive in ../shared/toolchains."""
    env = os.environ.get("SECP256K1_SRC")
    path = Path(env) if env else SHARED / "toolchains" / "secp256k1" / "secp256k1-src.tar.gz"
    if not path.exists():
        unavailable(f"libsecp256k1 source not found at {path} (set SECP256K1_SRC)")
    return path


def vectors_location() -> Path:
    """Where the vectors should be, without checking (for collection-time ids)."""
    return _locate("QUILL_VECTORS", SHARED / "vectors")


def vectors_dir() -> Path:
    """The public test vectors: $QUILL_VECTORS, then ../shared/vectors."""
    path = vectors_location()
    if not path.is_dir():
        unavailable(f"shared test vectors not found at {path} (set QUILL_VECTORS)")
    return path


def vector_path(relative: str) -> Path:
    """One file of the vectors; a missing file is treated like a missing folder."""
    path = vectors_dir() / relative
    if not path.exists():
        unavailable(f"vector file {relative} not found in {path.parent}")
    return path


def reference_location() -> Path:
    """Where Core's reference texts should be, without checking (for collection-time ids)."""
    return _locate("QUILL_REFERENCE", SHARED / "reference")


def reference_path(relative: str) -> Path:
    """One file of Core's reference texts (core-rpc.md, core-rpc-golden.json):
    $QUILL_REFERENCE, then ../shared/reference."""
    path = reference_location() / relative
    if not path.exists():
        unavailable(f"reference file {relative} not found in {path.parent} (set QUILL_REFERENCE)")
    return path
