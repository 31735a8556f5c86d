"""``--executor NAME[=ARG]``: the built-in executors in a static table (nothing is imported
until one is chosen), then the entry-point group ``harness_tui.executors``, read only for a
name the table does not know."""

from __future__ import annotations

import importlib
from importlib import metadata

from ..engine.attempt import Executor, ExecutorError
from ..engine.untrusted import quoted

__all__ = ["BUILTINS", "GROUP", "available", "executor_class", "executor_from_option"]

GROUP = "harness_tui.executors"
"""The entry-point group a third-party executor publishes itself under."""

BUILTINS: dict[str, str] = {
    "threads": "harness_tui.executors.threads:ThreadExecutor",
    "dask": "harness_tui.executors.dask:DaskExecutor",
}
"""The executors that ship with harness-tui, by ``--executor`` name (``module:class``).
Process isolation is not one of them: it wraps whichever executor runs an attempt (see
:mod:`.process`)."""


def _plugins() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=GROUP)}


def available() -> list[str]:
    """Every executor name: the built-ins and those installed under :data:`GROUP`."""
    return sorted({*BUILTINS, *_plugins()})


def executor_class(name: str) -> type[Executor]:
    """The executor class registered as ``name``.

    Raises:
        ExecutorError: unknown name (the line lists the available ones), or a plugin that
            cannot be imported or is not an :class:`Executor`.
    """
    target = BUILTINS.get(name)
    if target is not None:
        module, _, attr = target.partition(":")
        try:
            found: object = getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            raise ExecutorError(f"executor {quoted(name)} cannot be imported: {exc}") from None
    else:
        plugin = _plugins().get(name)
        if plugin is None:
            raise ExecutorError(
                f"unknown executor {quoted(name)}; available: {', '.join(available())}"
            )
        try:
            found = plugin.load()
        except Exception as exc:  # a third party's module: whatever it raises, one line
            raise ExecutorError(
                f"executor {quoted(name)} ({plugin.value}) cannot be loaded: "
                f"{type(exc).__name__}: {exc}"
            ) from None
    if not (isinstance(found, type) and issubclass(found, Executor)):
        raise ExecutorError(
            f"executor {quoted(name)} is {quoted(repr(found))}, not a subclass of "
            "harness_tui.executors.Executor"
        )
    return found


def executor_from_option(text: str) -> Executor:
    """The executor that ``--executor NAME[=ARG]`` asks for, not started yet.

    Raises:
        ExecutorError: an unknown name, or an argument the executor refuses (one line).
    """
    name, sep, arg = text.partition("=")
    if sep and not arg:
        raise ExecutorError(f"invalid executor {quoted(text)}: write NAME or NAME=ARG")
    return executor_class(name).from_option(arg if sep else None)
