"""Task callables as references, resolved only when a task executes (I6).

Loading, validating, planning, diffing and viewing a workflow never import user code; a
:class:`LazyCallable` imports its module on first call.
"""

from __future__ import annotations

import importlib
import re
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..engine.untrusted import quoted
from .builtins import BUILTINS

__all__ = [
    "PYTHON_REF",
    "REF_PATTERN",
    "LazyCallable",
    "ResolveError",
    "is_python_ref",
    "parse_ref",
]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REF = re.compile(rf"(?P<module>{_NAME}(?:\.{_NAME})*):(?P<attr>{_NAME}(?:\.{_NAME})*)")
REF_PATTERN = (
    rf"^(?:builtin:(?:{'|'.join(sorted(BUILTINS))})"
    rf"|(?!builtin:){_NAME}(?:\.{_NAME})*:{_NAME}(?:\.{_NAME})*)$"
)
"""Every reference :func:`parse_ref` accepts, as a JSON Schema pattern (ASCII classes, so
that JavaScript and Python regex engines agree)."""
_import_lock = threading.Lock()
PYTHON_REF = re.compile(r"^(?P<file>.+\.py):(?P<attr>[A-Za-z_][A-Za-z0-9_]*)$")
"""``path/to/file.py:factory``: a workflow defined in Python (see :mod:`.python_source`)."""


def is_python_ref(spec: str) -> bool:
    """Whether ``spec`` names a Python-defined workflow (``file.py:factory``, maybe ``@REV``)."""
    return bool(
        PYTHON_REF.match(spec) or ("@" in spec and PYTHON_REF.match(spec.rpartition("@")[0]))
    )


class ResolveError(ImportError):
    """A reference could not be resolved to a callable."""


def parse_ref(ref: str) -> str | None:
    """Check a reference's syntax; return a message if it is wrong, else None."""
    if ref.startswith("builtin:"):
        name = ref.removeprefix("builtin:")
        if name not in BUILTINS:
            import difflib

            close = difflib.get_close_matches(name, BUILTINS, n=1)
            hint = f" (did you mean builtin:{close[0]}?)" if close else ""
            return f"unknown built-in {quoted(ref)}{hint}; built-ins: {', '.join(sorted(BUILTINS))}"
        return None
    if not _REF.fullmatch(ref):
        return f"invalid reference {quoted(ref)}: write 'module:function' or 'builtin:NAME'"
    return None


class LazyCallable:
    """A ``module:function`` or ``builtin:NAME`` reference, imported on first call.

    Args:
        ref: the reference text.
        base: the workflow file's folder, searched before ``sys.path``.
        isolation: ``in-process`` or ``process`` (run by a child process: see
            :mod:`harness_tui.executors.process`).
    """

    __slots__ = ("_fn", "base", "isolation", "ref")

    def __init__(self, ref: str, base: Path | None, isolation: str = "in-process") -> None:
        self.ref = ref
        self.base = base
        self.isolation = isolation
        self._fn: Callable[[Mapping[str, Any]], Any] | None = None

    def __repr__(self) -> str:
        return f"LazyCallable({self.ref!r})"

    def resolve(self) -> Callable[[Mapping[str, Any]], Any]:
        """Import and return the callable.

        Raises:
            ResolveError: the module or attribute is missing, or is not callable.
        """
        if self._fn is not None:
            return self._fn
        if self.ref.startswith("builtin:"):
            self._fn = BUILTINS[self.ref.removeprefix("builtin:")]
            return self._fn
        module_name, _, attr = self.ref.partition(":")
        with _import_lock:
            added = False
            base = str(self.base) if self.base is not None else None
            if base is not None and base not in sys.path:
                sys.path.insert(0, base)
                added = True
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                raise ResolveError(
                    f"cannot import {module_name!r} for {self.ref!r}: {exc}"
                ) from exc
            finally:
                if added:
                    sys.path.remove(base)  # type: ignore[arg-type]
        target: Callable[[Mapping[str, Any]], Any] = module  # type: ignore[assignment]
        for part in attr.split("."):
            try:
                target = getattr(target, part)
            except AttributeError:
                raise ResolveError(f"{module_name!r} has no attribute {attr!r}") from None
        if not callable(target):
            raise ResolveError(f"{self.ref!r} is not callable")
        self._fn = target
        return self._fn

    def __call__(self, inputs: Mapping[str, Any]) -> Any:
        return self.resolve()(inputs)
