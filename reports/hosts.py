"""Which Host headers `search serve` answers (DNS rebinding): a page on another site
whose name resolves to 127.0.0.1 must not read the studies. Pure functions."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable

from core.errors import UserError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
ANY_HOST = "*"


def host_name(header: str | None) -> str | None:
    """The host of a Host header, lower case, without port or IPv6 brackets
    ("[::1]:8080" -> "::1", "Example.org" -> "example.org"); None when absent or empty."""
    if not header or not header.strip():
        return None
    h = header.strip().lower()
    if h.startswith("["):
        return h[1 : h.index("]")] if "]" in h else h
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def served_hosts(host: str, allow: Iterable[str] = ()) -> frozenset[str]:
    """The Host names a server listening on `host` answers: `host`; on a loopback address
    the loopback names too; on a wildcard address (0.0.0.0, ::) also this machine's name,
    fully qualified name and their addresses; plus every name in `allow` (ANY_HOST: any)."""
    names = {host_name(host) or host}
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        ip = None
    if host == "localhost" or (ip is not None and (ip.is_loopback or ip.is_unspecified)):
        names |= set(LOOPBACK_NAMES)
    if ip is not None and ip.is_unspecified:
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name.lower())
            try:
                names |= set(socket.gethostbyname_ex(name)[2])
            except OSError:
                pass
    for a in allow:
        if a != ANY_HOST and (not host_name(a) or re.search(r"[\s/@?#]", a)):
            raise UserError(f"--allow-host takes a host name or address such as example.org or 10.0.0.5, got {a!r}")
        names.add(ANY_HOST if a == ANY_HOST else host_name(a))
    return frozenset(names)


def host_allowed(header: str | None, allowed: frozenset[str]) -> bool:
    return ANY_HOST in allowed or host_name(header) in allowed
