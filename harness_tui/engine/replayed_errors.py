"""A recorded error raised again: the same class, from an allow-list of modules.

An export is untrusted: the class named in it is looked up only among the exceptions of the
HTTP clients, ``asyncio``, ``socket``, ``ssl`` and the builtins, never imported, and anything
else is raised as a :class:`RecordedCallError` named like it (``except Exception`` catches
it, ``except TheOriginalClass`` does not: an exception class of the task's own code is not
rebuilt from an untrusted export).
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["RecordedCallError", "rebuild"]


class RecordedCallError(Exception):
    """A recorded error replayed whose class is not rebuilt (raised as a subclass named like
    the original)."""


_MODULES = ("httpx", "httpx2", "urllib3", "asyncio", "socket", "ssl", "builtins",
            "harness_tui.engine.offline_guard", "harness_tui.engine.recorded_calls")  # fmt: skip


def _class(error: Mapping[str, str]) -> type[BaseException] | None:
    module_name = error.get("module", "")
    if module_name != "builtins" and not any(
        module_name == m or module_name.startswith(m + ".") for m in _MODULES
    ):
        return None
    module = builtins if module_name == "builtins" else sys.modules.get(module_name)
    found = getattr(module, error.get("type", ""), None)
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None


def rebuild(
    error: Mapping[str, str], *constructors: Callable[[type[BaseException], str], Any]
) -> BaseException:
    """The recorded error as an exception: its own class built by the first of
    ``constructors`` that accepts it (each gets the class and the message), else by
    ``cls(message)``, else a :class:`RecordedCallError` of the same name."""
    message = error.get("message", "")
    cls = _class(error)
    if cls is not None:
        for make in (*constructors, _plain):
            try:
                made: Any = make(cls, message)
            except Exception:
                continue
            if isinstance(made, BaseException):
                return made
    name = error.get("type") or "RecordedError"
    kind = _named.get(name)
    if kind is None:
        safe = name if name.isidentifier() else "RecordedError"
        kind = _named[name] = type(safe, (RecordedCallError,), {})
    replayed: BaseException = kind(message)
    return replayed


_named: dict[str, type[RecordedCallError]] = {}


def _plain(cls: type[BaseException], message: str) -> BaseException:
    return cls(message)
