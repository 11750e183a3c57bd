"""HTTP Basic authentication as Core's httprpc.cpp (core-rpc.md §5.2).

Every credential is held the way Core holds it: user, salt and
HMAC-SHA256(salt, password). A plain -rpcuser/-rpcpassword or the cookie is
stored with a random salt, so checking is one code path, in constant time.
"""

import base64
import hashlib
import hmac
import ipaddress
import os
import secrets
from dataclasses import dataclass

COOKIE_USER = "__cookie__"
COOKIE_PERMS = {"owner": 0o600, "group": 0o640, "all": 0o644}


class AuthConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Credential:
    user: str
    salt: str
    hmac_hex: str

    @classmethod
    def from_password(cls, user: str, password: str) -> "Credential":
        salt = secrets.token_hex(16)
        return cls(user, salt, _hmac_hex(salt, password))

    @classmethod
    def from_rpcauth(cls, value: str) -> "Credential":
        """`user:salt$hmac`, as share/rpcauth/rpcauth.py prints it."""
        if value.count(":") != 1 or value.count("$") != 1:
            raise AuthConfigError("Invalid -rpcauth argument.")
        user, rest = value.split(":")
        salt, digest = rest.split("$")
        return cls(user, salt, digest)

    def matches(self, user: str, password: str) -> bool:
        user_ok = hmac.compare_digest(self.user.encode(), user.encode())
        pass_ok = hmac.compare_digest(self.hmac_hex.encode(), _hmac_hex(self.salt, password).encode())
        return user_ok and pass_ok


def _hmac_hex(salt: str, password: str) -> str:
    return hmac.new(salt.encode(), password.encode(), hashlib.sha256).hexdigest()


def parse_basic(header: str | None):
    """(user, password) from an Authorization header, or None."""
    if not header or not header.startswith("Basic "):
        return None
    try:
        decoded = base64.b64decode(header[len("Basic "):].strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    if ":" not in decoded:
        return None
    user, _, password = decoded.partition(":")
    return user, password


class Authenticator:
    def __init__(self, credentials):
        self.credentials = list(credentials)

    def check(self, header: str | None):
        """The authenticated user name, or None."""
        parsed = parse_basic(header)
        if parsed is None:
            return None
        user, password = parsed
        ok = False
        for cred in self.credentials:
            ok |= cred.matches(user, password)  # no early exit: time does not depend on which entry
        return user if ok else None


def write_cookie(path: str, perms: str = "owner") -> str:
    """Write `__cookie__:<64 hex>` (no newline) via a temp file; return the password."""
    if perms not in COOKIE_PERMS:
        raise AuthConfigError(f"Invalid -rpccookieperms={perms}; must be one of 'owner', 'group', or 'all'.")
    password = secrets.token_hex(32)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, COOKIE_PERMS[perms])
    try:
        os.fchmod(fd, COOKIE_PERMS[perms])
        os.write(fd, f"{COOKIE_USER}:{password}".encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return password


def read_cookie(path: str):
    """(user, password) from a cookie file, or None if it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read().strip()
    except OSError:
        return None
    if ":" not in text:
        return None
    user, _, password = text.partition(":")
    return user, password


def remove_cookie(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


class AllowList:
    """127.0.0.0/8 and ::1 always, plus each -rpcallowip subnet."""

    def __init__(self, allowips=()):
        self.networks = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]
        for spec in allowips:
            self.networks.append(parse_subnet(spec))

    def allows(self, host: str) -> bool:
        try:
            addr = ipaddress.ip_address(host.split("%")[0])
        except ValueError:
            return False
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
            addr = addr.ipv4_mapped
        return any(addr.version == n.version and addr in n for n in self.networks)


def parse_subnet(spec: str):
    try:
        return ipaddress.ip_network(spec, strict=False)
    except ValueError:
        pass
    if "/" in spec:  # network/netmask
        addr, mask = spec.split("/", 1)
        try:
            return ipaddress.ip_network(f"{addr}/{ipaddress.ip_address(mask)}", strict=False)
        except ValueError:
            pass
    raise AuthConfigError(
        f"Invalid -rpcallowip subnet specification: {spec}. Valid values are a single IP (e.g. 1.2.3.4), "
        "a network/netmask (e.g. 1.2.3.4/255.255.255.0), a network/CIDR (e.g. 1.2.3.4/24), all ipv4 (0.0.0.0/0), "
        "or all ipv6 (::/0). RFC4193 is allowed only if -cjdnsreachable=0.")
