"""The architecture's rules, checked on the source: data flows RPC -> handler -> domain -> store/device,
and each consensus constant and script template has one home.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOST = REPO / "host" / "quill"
FIRMWARE = REPO / "firmware" / "quillfw"

# Packages below the handlers: they raise their own errors and never see the RPC layer.
DOMAIN = ("tx", "signing", "chain", "wallet", "device", "emulator")
# What a domain module may not import: the RPC layer, the handlers, the daemon or the CLI.
FORBIDDEN = ("quill.rpc", "quill.handlers", "quill.daemon", "quill.cli")


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", DOMAIN)
def test_domain_packages_do_not_reach_up_into_the_rpc_layer(package):
    offenders = []
    for path in _modules(HOST / package):
        for name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                offenders.append(f"{path.relative_to(REPO)} imports {name}")
        if re.search(r"\bRPCError\b", path.read_text()):
            offenders.append(f"{path.relative_to(REPO)} names RPCError")
    assert not offenders, "\n".join(offenders)


def test_only_handlers_and_the_rpc_layer_raise_rpc_errors():
    allowed = {"rpc", "handlers", "daemon", "cli"}
    offenders = [str(p.relative_to(REPO)) for p in _modules(HOST)
                 if p.relative_to(HOST).parts[0] not in allowed and "RPCError(" in p.read_text()]
    assert not offenders


def test_the_firmware_never_imports_the_host_or_the_emulator():
    offenders = []
    for path in _modules(FIRMWARE):
        for name in _imports(path):
            if name.split(".")[0] == "quill" or "emulator" in name or "approve_channel" in name:
                offenders.append(f"{path.relative_to(REPO)} imports {name}")
    assert not offenders, "\n".join(offenders)


# name -> a pattern matching its definition with a literal value
_CONSTANTS = {
    "MAX_MONEY": r"^\s*MAX_MONEY\s*(:[^=]*)?=\s*(const\()?\s*[0-9_]",
    "COIN": r"^\s*COIN\s*(:[^=]*)?=\s*(const\()?\s*[0-9_]",
    "WITNESS_SCALE_FACTOR": r"^\s*WITNESS_SCALE_FACTOR\s*(:[^=]*)?=\s*(const\()?\s*[0-9]",
    "the curve order n": r"=\s*(const\()?\s*0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141",
}


@pytest.mark.parametrize("name", sorted(_CONSTANTS))
def test_each_consensus_constant_is_defined_once_and_the_host_imports_it(name):
    pattern = re.compile(_CONSTANTS[name], re.M | re.I)
    homes = [str(p.relative_to(REPO)) for side in (HOST, FIRMWARE) for p in _modules(side)
             if pattern.search(p.read_text())]
    assert len(homes) == 1 and homes[0].startswith("firmware/"), f"{name} is defined in {homes}"


def test_output_script_templates_are_written_only_in_tx_script():
    # The byte prefixes of P2PKH, P2SH, P2WPKH, P2WSH and P2TR output scripts.
    template = re.compile(r'b"(\\x76\\xa9\\x14|\\xa9\\x14|\\x00\\x14|\\x00\\x20|\\x51\\x20)"')
    homes = [str(p.relative_to(REPO)) for p in _modules(HOST) if template.search(p.read_text())]
    assert homes == ["host/quill/tx/script.py"]


def test_a_method_core_has_carries_only_cores_help():
    """Core's help file is the one home of a Core method's help: no hand-written text beside it."""
    from quill.daemon.main import build_registry
    for method in build_registry().methods.values():
        if not method.core_help:
            continue
        written = [method.description, method.result, method.examples]
        written += [text for p in method.params for text in (p.help, p.placeholder)]
        assert not any(written), f"{method.name} has Core's help file and its own help text"
