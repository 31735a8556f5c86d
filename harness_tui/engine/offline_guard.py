"""The network closed to an offline attempt, and only to it.

Installed once (by the first offline attempt), the guard wraps ``socket.socket.connect``,
``connect_ex``, ``send``, ``sendall``, ``sendto``, ``sendmsg``, the same methods of
``ssl.SSLSocket``, and ``socket.getaddrinfo``. Each wrapper looks up the attempt running in its
context (:data:`~harness_tui.engine.recorded_calls.current`, the context the log capture uses):
when it is an offline attempt still running, the call is refused with :class:`OfflineRefusal`
and the attempt is marked diverged, so it fails even if the task swallows the error. Everyone
else (the harness's own sockets, a Dask worker's, threads outside any attempt) goes through
untouched, at the cost of one context lookup.

Loopback is refused too: a local model server is the outside world of a recording. Sends on
sockets opened before the attempt (a client's pooled keep-alive connection) are refused.

Not covered: subprocesses a task starts (their sockets are another process's), and C
extensions that open sockets without Python's ``socket`` module.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

from .recorded_calls import current

__all__ = ["OfflineRefusal", "install", "installed"]


class OfflineRefusal(ConnectionRefusedError):
    """The network is closed to an offline attempt."""


_lock = threading.Lock()
_originals: dict[tuple[object, str], Any] = {}


def _refuse(what: str) -> None:
    io = current.get()
    if io is not None and io.guarded and not io.closed:
        line = io.diverge(f"the network is closed offline: {what} refused")
        raise OfflineRefusal(line)


def _where(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


def _wrap_method(owner: type, name: str, describe: Callable[..., str]) -> None:
    original = owner.__dict__.get(name) or getattr(owner, name)
    _originals[(owner, name)] = original

    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        if current.get() is not None:
            _refuse(describe(self, *args))
        return original(self, *args, **kwargs)

    guarded.__name__ = name
    guarded.__qualname__ = f"{owner.__name__}.{name}"
    guarded.__doc__ = original.__doc__
    setattr(owner, name, guarded)


def _peer(sock: Any) -> str:
    try:
        return _where(sock.getpeername())
    except OSError:
        return "an unconnected socket"


def _connect_to(sock: Any, address: Any = None, *_: Any) -> str:
    return f"connect to {_where(address)}"


def install() -> None:
    """Wrap the socket functions (idempotent)."""
    import ssl  # only for a run that closes the network: its import is some 7 ms

    with _lock:
        if _originals:
            return
        for name in ("connect", "connect_ex"):
            _wrap_method(
                socket.socket, name, lambda s, address=None, *_: f"connect to {_where(address)}"
            )
        for owner in (socket.socket, ssl.SSLSocket):
            for name in ("send", "sendall", "sendto", "sendmsg"):
                if hasattr(owner, name):
                    _wrap_method(owner, name, lambda s, *_: f"a send to {_peer(s)}")
        original = socket.getaddrinfo
        _originals[(socket, "getaddrinfo")] = original

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            if current.get() is not None:
                _refuse(f"resolving {host}")
            return original(host, port, *args, **kwargs)

        getaddrinfo.__doc__ = original.__doc__
        socket.getaddrinfo = getaddrinfo


def installed() -> bool:
    """Whether the guard is in place."""
    return bool(_originals)
