"""Output script descriptors (BIP380-386) as Core's script/descriptor.cpp parses them.

Supported: pk, pkh, wpkh, sh, wsh, multi, sortedmulti, tr(KEY) (no script tree),
addr, raw; keys as hex, WIF, xpub/tpub (and xprv/tprv), with [fingerprint/path]
origins and /* or /*h ranges. Error texts are Core's (`ParseScript`, `ParsePubkey`,
`CheckChecksum`), except that a key expression that looks like private key
material is never echoed back.

`parse(text, chain, require_checksum)` -> Descriptor or DescriptorError.
`Descriptor.script(index)` -> scriptPubKey bytes (DerivationError when a hardened
step has no private key); `Descriptor.to_string()` is Core's public ToString()
with checksum.
"""

import coincurve

from quill.tx import script as S
from quill.tx.address import AddressError, decode_destination, decode_secret
from quill.tx.descriptor import add_checksum, descriptor_checksum, is_valid_xonly
from quill.tx.hashes import hash160, sha256
from quill.wallet.bip32 import (
    HARDENED,
    DerivationError,
    decode_ext_privkey,
    decode_ext_pubkey,
    is_valid_pubkey,
)

__all__ = ["DescriptorError", "DerivationError", "Descriptor", "parse", "check_checksum"]

MAX_PUBKEYS_PER_MULTISIG = 20
MAX_SCRIPT_ELEMENT_SIZE = 520
TOP, P2SH, P2WPKH, P2WSH, P2TR = "top", "p2sh", "p2wpkh", "p2wsh", "p2tr"

OP_0, OP_CHECKSIG, OP_CHECKMULTISIG = 0x00, 0xAC, 0xAE
OP_DUP, OP_HASH160, OP_EQUAL, OP_EQUALVERIFY = 0x76, 0xA9, 0x87, 0x88

# Output types as Core's OutputType names (getnewaddress address_type).
LEGACY, P2SH_SEGWIT, BECH32, BECH32M = "legacy", "p2sh-segwit", "bech32", "bech32m"


class DescriptorError(ValueError):
    """A descriptor that does not parse; the message is Core's error text."""


# -- checksum (BIP380, Core's CheckChecksum) ------------------------------------


def check_checksum(text: str, require: bool) -> str:
    """Validate the '#checksum' suffix; return the descriptor body."""
    parts = text.split("#")
    if len(parts) > 2:
        raise DescriptorError("Multiple '#' symbols")
    if len(parts) == 1 and require:
        raise DescriptorError("Missing checksum")
    if len(parts) == 2 and len(parts[1]) != 8:
        raise DescriptorError(f"Expected 8 character checksum, not {len(parts[1])} characters")
    computed = descriptor_checksum(parts[0])
    if computed is None:
        raise DescriptorError("Invalid characters in payload")
    if len(parts) == 2 and parts[1] != computed:
        raise DescriptorError(f"Provided checksum '{parts[1]}' does not match computed checksum '{computed}'")
    return parts[0]


# -- key expressions (BIP380) ---------------------------------------------------


def _format_path(path, apostrophe: bool) -> str:
    mark = "'" if apostrophe else "h"
    return "".join("/%d%s" % (p & ~HARDENED, mark if p & HARDENED else "") for p in path)


def _parse_path_element(elem: str, flags: dict) -> int:
    hardened = False
    if elem and elem[-1] in "'h":
        flags["apostrophe"] = flags["apostrophe"] or elem[-1] == "'"
        elem = elem[:-1]
        hardened = True
    if not elem.isdigit() or not elem.isascii() or int(elem) > 0xFFFFFFFF:
        raise DescriptorError(f"Key path value '{elem}' is not a valid uint32")
    value = int(elem)
    if value > 0x7FFFFFFF:
        raise DescriptorError(f"Key path value {value} is out of range")
    return value | (HARDENED if hardened else 0)


def _is_hex(s: str) -> bool:
    return len(s) % 2 == 0 and len(s) > 0 and all(c in "0123456789abcdefABCDEF" for c in s)


def _looks_secret(s: str) -> bool:
    # xprv/tprv and WIF strings: never put them in an error message.
    return s[:4] in ("xprv", "tprv") or (len(s) in (51, 52) and s[0] in "5KLc9")


class Key:
    """One KEY expression: a constant key or an extended key with a path."""

    def __init__(self):
        self.origin = None          # (fingerprint bytes, path list) or None
        self.const = None           # constant public key bytes (33, 65 or x-only 32)
        self.ext = None             # ExtPubKey (root as written)
        self.ext_priv = None        # ExtPrivKey when an xprv was written (memory only)
        self.path = []
        self.wildcard = None        # None, "unhardened", "hardened"
        self.apostrophe = False
        self.xonly = False
        self.has_private = False
        self.const_secret = None    # a WIF key's secret (memory only)

    def __repr__(self):  # never a secret
        return f"Key(const={None if self.const is None else self.const.hex()}, private={self.has_private})"

    def is_range(self) -> bool:
        return self.wildcard is not None

    def needs_private(self) -> bool:
        return self.ext is not None and (self.wildcard == "hardened" or any(p & HARDENED for p in self.path))

    def pubkey(self, index: int) -> bytes:
        """The public key for child `index` (33/65 bytes, or 32 in tr())."""
        if self.const is not None:
            return self.const
        last = getattr(self, "_last", None)
        if last is not None and last[0] == index:
            return last[1]
        if self.wildcard == "hardened" and self.ext_priv is not None:
            pub = self._private_base().derive(index | HARDENED).neuter().pubkey
        else:
            key = self._public_base()
            if self.wildcard == "unhardened":
                key = key.derive(index)
            elif self.wildcard == "hardened":
                key.derive(index | HARDENED)  # raises DerivationError: no private key
            pub = key.pubkey
        pub = pub[1:] if self.xonly else pub
        self._last = (index, pub)  # a descriptor asks for the same child's key several times
        return pub

    def secret(self, index: int):
        """(secret, compressed) of child `index` when the expression holds private key material
        (Core's ExpandPrivate), else None. Memory only: it goes to the signing device."""
        if self.const_secret is not None:
            return self.const_secret, len(self.const) != 65
        if self.ext_priv is None:
            return None
        key = self._private_base()
        if self.wildcard == "unhardened":
            key = key.derive(index)
        elif self.wildcard == "hardened":
            key = key.derive(index | HARDENED)
        return key.secret(), True

    def _private_base(self):
        """The xprv at the end of the fixed path, derived once (memory only)."""
        base = getattr(self, "_priv_base", None)
        if base is None:
            base = self.ext_priv
            for step in self.path:
                base = base.derive(step)
            self._priv_base = base
        return base

    def _public_base(self):
        """The xpub at the end of the fixed path, derived once (ranges reuse it); from the
        xprv when there is one (the path may have hardened steps)."""
        base = getattr(self, "_base", None)
        if base is None:
            if self.ext_priv is not None:
                base = self._private_base().neuter()
            else:
                base = self.ext
                for step in self.path:
                    base = base.derive(step)  # DerivationError on a hardened step
            self._base = base
        return base

    def origin_at(self, index):
        """(fingerprint, full path) of child `index`, as Core's KeyOriginInfo."""
        if self.const is not None:
            if self.origin is not None:
                return self.origin
            # Core's ConstPubkeyProvider: the key's own fingerprint and an empty path (an x-only key
            # stands for its even point)
            pubkey = b"\x02" + self.const if len(self.const) == 32 else self.const
            return hash160(pubkey)[:4], []
        steps = list(self.path) + ([index | (HARDENED if self.wildcard == "hardened" else 0)]
                                   if self.wildcard else [])
        if self.origin is not None:
            return self.origin[0], list(self.origin[1]) + steps
        return self.ext.fingerprint(), steps

    def inferred_string(self, index) -> str:
        """The key as Core's InferDescriptor prints it with the wallet's key origins."""
        origin = self.origin_at(index)
        prefix = "" if origin is None else "[" + origin[0].hex() + _format_path(origin[1], False) + "]"
        return prefix + self.pubkey(index).hex()

    def to_string(self, chain) -> str:
        out = ""
        if self.origin is not None:
            fp, path = self.origin
            out = "[" + fp.hex() + _format_path(path, self.apostrophe) + "]"
        if self.const is not None:
            return out + self.const.hex()
        out += self.ext.serialize(chain) + _format_path(self.path, self.apostrophe)
        if self.wildcard == "unhardened":
            out += "/*"
        elif self.wildcard == "hardened":
            out += "/*'" if self.apostrophe else "/*h"
        return out


def _parse_key_inner(text: str, ctx, chain, flags) -> Key:
    split = text.split("/")
    head = split[0]
    if not head:
        raise DescriptorError("No key provided")
    if head[0] in " \f\n\r\t\v" or head[-1] in " \f\n\r\t\v":
        shown = "<redacted>" if _looks_secret(head.strip()) else head
        raise DescriptorError(f"Key '{shown}' is invalid due to whitespace")
    key = Key()
    key.xonly = ctx == P2TR
    permit_uncompressed = ctx in (TOP, P2SH)
    if len(split) == 1:
        if _is_hex(head):
            data = bytes.fromhex(head)
            if len(data) == 65 and data[0] in (6, 7):
                raise DescriptorError("Hybrid public keys are not allowed")
            if len(data) in (33, 65) and data[0] in (2, 3, 4) and is_valid_pubkey(data):
                if len(data) == 65 and not permit_uncompressed:
                    raise DescriptorError("Uncompressed keys are not allowed")
                key.const = data[1:] if key.xonly else data
                return key
            if ctx == P2TR and len(data) == 32 and is_valid_xonly(data):
                key.const = data
                return key
            raise DescriptorError(f"Pubkey '{head}' is invalid")
        secret = decode_secret(head, chain)
        if secret is not None:
            raw, compressed = secret
            if not (permit_uncompressed or compressed):
                raise DescriptorError("Uncompressed keys are not allowed")
            pub = coincurve.PrivateKey(raw).public_key.format(compressed=compressed)
            key.const = pub[1:] if key.xonly else pub
            key.const_secret = raw
            key.has_private = True
            return key
    ext_priv = decode_ext_privkey(head, chain)
    ext = ext_priv.neuter() if ext_priv is not None else decode_ext_pubkey(head, chain)
    if ext is None:
        shown = "<redacted>" if _looks_secret(head) else head
        raise DescriptorError(f"key '{shown}' is not valid")
    rest = split[1:]
    if rest and rest[-1] == "*":
        key.wildcard = "unhardened"
        rest = rest[:-1]
    elif rest and rest[-1] in ("*'", "*h"):
        key.wildcard = "hardened"
        flags["apostrophe"] = flags["apostrophe"] or rest[-1] == "*'"
        rest = rest[:-1]
    key.path = [_parse_path_element(e, flags) for e in rest]
    key.ext = ext
    key.ext_priv = ext_priv
    key.has_private = ext_priv is not None
    return key


def parse_key(text: str, ctx, chain) -> Key:
    """Core's ParsePubkey: optional [fingerprint/path] origin, then the key."""
    flags = {"apostrophe": False}
    parts = text.split("]")
    if len(parts) > 2:
        raise DescriptorError("Multiple ']' characters found for a single pubkey")
    if len(parts) == 1:
        key = _parse_key_inner(text, ctx, chain, flags)
        key.apostrophe = flags["apostrophe"]
        return key
    if not parts[0] or parts[0][0] != "[":
        got = parts[0][0] if parts[0] else "]"
        raise DescriptorError(f"Key origin start '[ character expected but not found, got '{got}' instead")
    slash = parts[0][1:].split("/")
    if len(slash[0]) != 8:
        raise DescriptorError(f"Fingerprint is not 4 bytes ({len(slash[0])} characters instead of 8 characters)")
    if not _is_hex(slash[0]):
        raise DescriptorError(f"Fingerprint '{slash[0]}' is not hex")
    origin_path = [_parse_path_element(e, flags) for e in slash[1:]]
    key = _parse_key_inner(parts[1], ctx, chain, flags)
    key.origin = (bytes.fromhex(slash[0]), origin_path)
    key.apostrophe = flags["apostrophe"]
    return key


# -- script expressions --------------------------------------------------------


def _small_int(n: int) -> bytes:
    """CScript() << n: OP_0/OP_1..OP_16, else a minimal script-number push."""
    if n == 0:
        return bytes((OP_0,))
    if n <= 16:
        return bytes((0x50 + n,))
    return S.push_data(n.to_bytes(1 if n < 0x80 else 2, "little"))


class Node:
    """A parsed script expression: kind, keys, sub-expression, constant data."""

    def __init__(self, kind, keys=(), sub=None, threshold=0, data=b""):
        self.kind = kind
        self.keys = list(keys)
        self.sub = sub
        self.threshold = threshold
        self.data = data   # addr/raw script
        self.addr_text = ""   # addr(): the address as written

    def is_range(self) -> bool:
        return any(k.is_range() for k in self.keys) or (self.sub is not None and self.sub.is_range())

    def all_keys(self):
        yield from self.keys
        if self.sub is not None:
            yield from self.sub.all_keys()

    def script(self, index: int) -> bytes:
        k = self.kind
        if k in ("addr", "raw"):
            return self.data
        if k == "pk":
            return S.push_data(self.keys[0].pubkey(index)) + bytes((OP_CHECKSIG,))
        if k == "pkh":
            return S.p2pkh(hash160(self.keys[0].pubkey(index)))
        if k == "wpkh":
            return S.p2wpkh(hash160(self.keys[0].pubkey(index)))
        if k in ("multi", "sortedmulti"):
            pubs = [key.pubkey(index) for key in self.keys]
            if k == "sortedmulti":
                pubs.sort()
            return (_small_int(self.threshold) + b"".join(S.push_data(p) for p in pubs)
                    + _small_int(len(pubs)) + bytes((OP_CHECKMULTISIG,)))
        if k == "sh":
            return S.p2sh_of(self.sub.script(index))
        if k == "wsh":
            return S.p2wsh_of(self.sub.script(index))
        if k == "tr":
            return S.p2tr(taproot_output_key(self.keys[0].pubkey(index)))
        raise AssertionError(k)

    def inferred_string(self, index, chain) -> str:
        """Core's InferDescriptor(script, wallet provider) for child `index`."""
        k = self.kind
        if k in ("addr", "raw"):
            return self.to_string(chain)
        if k in ("sh", "wsh"):
            return f"{k}({self.sub.inferred_string(index, chain)})"
        if k in ("multi", "sortedmulti"):
            keys = list(self.keys)
            if k == "sortedmulti":
                keys.sort(key=lambda key: key.pubkey(index))
            return f"multi({self.threshold}," + ",".join(key.inferred_string(index) for key in keys) + ")"
        return f"{k}({self.keys[0].inferred_string(index)})"

    def to_string(self, chain) -> str:
        k = self.kind
        if k == "addr":
            return f"addr({self.addr_text})"
        if k == "raw":
            return f"raw({self.data.hex()})"
        if k in ("sh", "wsh"):
            return f"{k}({self.sub.to_string(chain)})"
        if k in ("multi", "sortedmulti"):
            return f"{k}({self.threshold}," + ",".join(key.to_string(chain) for key in self.keys) + ")"
        return f"{k}({self.keys[0].to_string(chain)})"


def taproot_output_key(internal: bytes) -> bytes:
    """BIP341 output key for a key-path-only tr(): P + H_TapTweak(P)G, x-only."""
    tag = sha256(b"TapTweak")
    tweak = sha256(tag + tag + internal)
    point = coincurve.PublicKey(b"\x02" + internal).add(tweak)
    return point.format(compressed=True)[1:]


def _split_args(body: str):
    """Split a function body at top-level commas (Core's Expr)."""
    args, level, start = [], 0, 0
    for i, c in enumerate(body):
        if c in "({":
            level += 1
        elif c in ")}":
            level -= 1
        elif c == "," and level == 0:
            args.append(body[start:i])
            start = i + 1
    args.append(body[start:])
    return args


def _func(name: str, expr: str):
    if len(expr) >= len(name) + 2 and expr.startswith(name + "(") and expr.endswith(")"):
        return expr[len(name) + 1:-1]
    return None


def _key_arg(prefix, text, ctx, chain) -> Key:
    try:
        return parse_key(text, ctx, chain)
    except DescriptorError as e:
        raise DescriptorError(f"{prefix}: {e}") from None


def _parse_multi(kind, body, ctx, chain) -> Node:
    args = _split_args(body)
    threshold_text = args[0]
    if not threshold_text.isdigit() or not threshold_text.isascii() or int(threshold_text) > 0xFFFFFFFF:
        raise DescriptorError(f"Multi threshold '{threshold_text}' is not valid")
    threshold = int(threshold_text)
    keys = [_key_arg("Multi", a, ctx, chain) for a in args[1:]]
    if not keys or len(keys) > MAX_PUBKEYS_PER_MULTISIG:
        raise DescriptorError(f"Cannot have {len(keys)} keys in multisig; must have between 1 and "
                              f"{MAX_PUBKEYS_PER_MULTISIG} keys, inclusive")
    if threshold < 1:
        raise DescriptorError(f"Multisig threshold cannot be {threshold}, must be at least 1")
    if threshold > len(keys):
        raise DescriptorError("Multisig threshold cannot be larger than the number of keys; threshold is "
                              f"{threshold} but only {len(keys)} keys specified")
    if ctx == TOP and len(keys) > 3:
        raise DescriptorError(f"Cannot have {len(keys)} pubkeys in bare multisig; only at most 3 pubkeys")
    if ctx == P2SH:
        size = 3 + sum(1 + (65 if k.const is not None and len(k.const) == 65 else 33) for k in keys)
        if size > MAX_SCRIPT_ELEMENT_SIZE:
            raise DescriptorError(f"P2SH script is too large, {size} bytes is larger than "
                                  f"{MAX_SCRIPT_ELEMENT_SIZE} bytes")
    return Node(kind, keys, threshold=threshold)


def _parse_script(expr: str, ctx, chain) -> Node:  # noqa: C901 (Core's ParseScript, one case per function)
    body = _func("pk", expr)
    if body is not None:
        return Node("pk", [_key_arg("pk()", body, ctx, chain)])
    body = _func("pkh", expr)
    if body is not None:
        return Node("pkh", [_key_arg("pkh()", body, ctx, chain)])
    for kind in ("multi", "sortedmulti"):
        body = _func(kind, expr)
        if body is not None:
            return _parse_multi(kind, body, ctx, chain)
    body = _func("wpkh", expr)
    if body is not None:
        if ctx not in (TOP, P2SH):
            raise DescriptorError("Can only have wpkh() at top level or inside sh()")
        return Node("wpkh", [_key_arg("wpkh()", body, P2WPKH, chain)])
    body = _func("sh", expr)
    if body is not None:
        if ctx != TOP:
            raise DescriptorError("Can only have sh() at top level")
        return Node("sh", sub=_parse_script(body, P2SH, chain))
    body = _func("wsh", expr)
    if body is not None:
        if ctx not in (TOP, P2SH):
            raise DescriptorError("Can only have wsh() at top level or inside sh()")
        return Node("wsh", sub=_parse_script(body, P2WSH, chain))
    body = _func("tr", expr)
    if body is not None:
        if ctx != TOP:
            raise DescriptorError("Can only have tr at top level")
        args = _split_args(body)
        if len(args) > 1:
            raise DescriptorError("tr() with a script tree is not supported by this wallet")
        return Node("tr", [_key_arg("tr()", args[0], P2TR, chain)])
    body = _func("addr", expr)
    if body is not None:
        if ctx != TOP:
            raise DescriptorError("Can only have addr() at top level")
        try:
            script = decode_destination(body, chain)
        except AddressError:
            raise DescriptorError("Address is not valid") from None
        node = Node("addr", data=script)
        node.addr_text = body
        return node
    body = _func("raw", expr)
    if body is not None:
        if ctx != TOP:
            raise DescriptorError("Can only have raw() at top level")
        if not _is_hex(body):
            raise DescriptorError("Raw script is not hex")
        return Node("raw", data=bytes.fromhex(body))
    if _func("combo", expr) is not None:
        raise DescriptorError("combo() descriptors are not supported by this wallet")
    if ctx == P2SH:
        raise DescriptorError("A function is needed within P2SH")
    if ctx == P2WSH:
        raise DescriptorError("A function is needed within P2WSH")
    raise DescriptorError(f"'{expr}' is not a valid descriptor function")


class Descriptor:
    def __init__(self, node: Node, chain):
        self.node = node
        self.chain = chain

    def is_range(self) -> bool:
        return self.node.is_range()

    def is_solvable(self) -> bool:
        return self.node.kind not in ("addr", "raw")

    def has_private_keys(self) -> bool:
        return any(k.has_private for k in self.node.all_keys())

    def needs_private(self) -> bool:
        return any(k.needs_private() for k in self.node.all_keys())

    def script(self, index: int = 0) -> bytes:
        return self.node.script(index)

    def to_string(self) -> str:
        """Core's public ToString() with its checksum."""
        return add_checksum(self.node.to_string(self.chain))

    def inferred_string(self, index: int) -> str:
        return add_checksum(self.node.inferred_string(index, self.chain))

    def output_type(self):
        """Core's Descriptor::GetOutputType, or None."""
        n = self.node
        if n.kind == "pkh":
            return LEGACY
        if n.kind == "wpkh" or n.kind == "wsh":
            return BECH32
        if n.kind == "tr":
            return BECH32M
        if n.kind == "sh":
            return P2SH_SEGWIT if n.sub.kind in ("wpkh", "wsh") else LEGACY
        if n.kind in ("addr", "raw"):
            kind, _ = S.solver(n.data)
            return {S.PUBKEYHASH: LEGACY, S.SCRIPTHASH: LEGACY, S.WITNESS_V0_KEYHASH: BECH32,
                    S.WITNESS_V0_SCRIPTHASH: BECH32, S.WITNESS_V1_TAPROOT: BECH32M}.get(kind) \
                if n.kind == "addr" else None
        return None


def parse(text: str, chain, require_checksum: bool = False) -> Descriptor:
    """Core's Parse(): checksum, then the script expression; DescriptorError on failure."""
    body = check_checksum(text, require_checksum)
    args = _split_args(body)
    if len(args) != 1 or body.count("(") != body.count(")"):
        raise DescriptorError(f"'{body}' is not a valid descriptor function")
    return Descriptor(_parse_script(body, TOP, chain), chain)
