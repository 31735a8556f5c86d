"""Who may use a served workbench: the policy, free of any web framework (docs/serve.md).

A served workbench runs workflows, so it answers only:

- requests whose ``Host`` header names the server as it was told to be reached (loopback
  names by default, ``--allow-host`` for more): a DNS-rebinding page, whose requests carry its
  own host name, gets nothing;
- browsers that hold the session cookie, which only the token printed at start buys;
- on the WebSocket (which runs the app) and downloads (which carry exports), requests from the
  served origin itself: a page on another origin, even another port of 127.0.0.1 (where
  SameSite cookies are sent all the same), is refused.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["Guard", "HostError", "default_hosts", "is_loopback", "origin_host", "parse_host"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""The names a loopback server answers to (with its port)."""


class HostError(ValueError):
    """A host or ``--allow-host`` value that cannot be used; the message says why."""


def is_loopback(host: str) -> bool:
    """``host`` (a name or an address, brackets allowed) is this machine's loopback."""
    bare = host.strip("[]").lower()
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def parse_host(value: str, default_port: int) -> str:
    """``NAME``, ``NAME:PORT``, ``ADDRESS`` or ``[V6]:PORT`` as the ``host:port`` a browser
    sends in its ``Host`` header (lower case, IPv6 in brackets)."""
    text = value.strip().lower()
    if not text or any(c in text for c in "/?#@ \t\\"):
        raise HostError(f"{value!r}: give a host name or address, optionally with :PORT")
    port: int | None = None
    if text.startswith("["):
        end = text.find("]")
        name, rest = text[: end + 1], text[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            raise HostError(f"{value!r}: an IPv6 address is written [ADDRESS] or [ADDRESS]:PORT")
        if rest:
            port = _port(rest[1:], value)
    elif text.count(":") > 1:
        try:
            name = f"[{ipaddress.IPv6Address(text)}]"
        except ValueError as exc:
            raise HostError(f"{value!r}: not an IPv6 address") from exc
    elif ":" in text:
        name, _, rest = text.partition(":")
        port = _port(rest, value)
    else:
        name = text
    if name in ("", "[]"):
        raise HostError(f"{value!r}: no host name")
    return f"{name}:{default_port if port is None else port}"


def _port(text: str, value: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise HostError(f"{value!r}: the port must be a number from 1 to 65535")
    return int(text)


def origin_host(origin: str) -> str | None:
    """The ``host:port`` of an ``Origin`` header (http or https), or None if it is not one."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        return None
    host = parts.hostname.lower()
    name = f"[{host}]" if ":" in host else host
    return f"{name}:{port or (443 if parts.scheme == 'https' else 80)}"


def _with_port(host_header: str, scheme: str = "http") -> str:
    """A ``Host`` header as ``host:port`` (browsers leave out a default port)."""
    host = host_header.strip().lower()
    has_port = host.rsplit("]", 1)[-1].count(":") == 1 if host.startswith("[") else ":" in host
    return host if has_port else f"{host}:{443 if scheme == 'https' else 80}"


@dataclass
class Guard:
    """The served workbench's secrets and the hosts it answers to.

    Args:
        allowed_hosts: ``host:port`` values accepted in the ``Host`` header (and so as the
            origin of the WebSocket and downloads).
        port: the served port (names the cookie: cookies do not separate ports, so two
            servers on one machine must not overwrite each other's).
    """

    allowed_hosts: frozenset[str]
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @property
    def cookie_name(self) -> str:
        return f"harness-tui-{self.port}"

    def set_cookie_header(self) -> str:
        """The ``Set-Cookie`` value that the token buys: script cannot read it (HttpOnly) and
        no other site's page or link sends it (SameSite=Strict); it ends with the browser."""
        return f"{self.cookie_name}={self.secret}; HttpOnly; SameSite=Strict; Path=/"

    def token_ok(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(token.encode(), self.token.encode())

    def cookie_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.secret.encode())

    def host_ok(self, host_header: str | None) -> bool:
        """The request names this server as it may be reached (stops DNS rebinding)."""
        return host_header is not None and _with_port(host_header) in self.allowed_hosts

    def same_origin(
        self,
        host_header: str | None,
        origin: str | None,
        fetch_site: str | None = None,
        websocket: bool = False,
    ) -> str | None:
        """Why a WebSocket or download request is not from the served page, or None if it is.

        The ``Origin`` must name the very host and port of the request (a browser always sends
        it on a WebSocket). A download is opened as a new tab, which browsers send without an
        ``Origin``: there ``Sec-Fetch-Site: same-origin`` vouches for it instead.
        """
        if not self.host_ok(host_header):
            return "unknown Host"
        assert host_header is not None
        if origin is not None:
            return None if origin_host(origin) == _with_port(host_header) else "foreign Origin"
        if websocket:
            return "no Origin"
        if fetch_site == "same-origin":
            return None
        return "no Origin and not Sec-Fetch-Site: same-origin"


def default_hosts(bind: str, port: int, extra: list[str]) -> frozenset[str]:
    """The ``Host`` values a server bound to ``bind`` answers to: the loopback names when it
    listens on loopback or on every address, the bound address itself, and ``extra``."""
    hosts = {parse_host(value, port) for value in extra}
    if is_loopback(bind) or bind in ("0.0.0.0", "::", ""):
        hosts.update(f"{name}:{port}" for name in LOOPBACK_NAMES)
    if bind not in ("0.0.0.0", "::", ""):
        hosts.add(parse_host(bind, port))
    return frozenset(hosts)
