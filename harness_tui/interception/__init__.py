"""HTTP interception for recorded calls: every request made through ``httpx`` (and its
successor ``httpx2``, which the ``openai`` client uses) or ``urllib3`` (``requests``) goes to
the recorder of the attempt that made it (:mod:`harness_tui.engine.recorded_calls`).

The clients are patched where one request meets one answer: ``HTTPTransport.handle_request``
and ``AsyncHTTPTransport.handle_async_request`` of httpx, ``HTTPConnectionPool._make_request``
of urllib3. Above that point the client's own retries, redirects, decoding and cookies run
unchanged, so a replayed answer goes through exactly the code a live one went through. Outside
a recording run a patched call costs one context lookup. Install it with the ``record`` extra's
clients present: ``pip install harness-tui[record]``.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

__all__ = ["install", "installed", "uninstall"]

_lock = threading.Lock()
_installed: list[str] = []
_undo: list[tuple[Any, str, Any]] = []

CLIENTS = (
    ("httpx", "harness_tui.interception.httpx_transports"),
    ("httpx2", "harness_tui.interception.httpx_transports"),
    ("urllib3", "harness_tui.interception.urllib3_pool"),
)
"""The client modules patched when importable, and the module that patches each."""


def install() -> list[str]:
    """Patch every client that can be imported (idempotent); return their names."""
    with _lock:
        if not _installed:
            for name, patcher in CLIENTS:
                try:
                    client = importlib.import_module(name)
                except ImportError:
                    continue
                _undo.extend(importlib.import_module(patcher).patch(client))
                _installed.append(name)
        return list(_installed)


def uninstall() -> None:
    """Put the clients' own methods back (benchmarks compare with and without)."""
    with _lock:
        for owner, name, original in reversed(_undo):
            setattr(owner, name, original)
        _undo.clear()
        _installed.clear()


def installed() -> list[str]:
    """The clients patched so far."""
    return list(_installed)
