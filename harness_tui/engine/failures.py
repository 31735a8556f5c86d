"""A task's failure as the trace records it: the canonical ``{"type", "message"}`` and the
traceback from the task's own frame on, both safe for any exception a task can raise."""

from __future__ import annotations

import traceback as tb

from .capture import utf8_safe

__all__ = ["error_of", "traceback_of"]


def error_of(exc: BaseException) -> dict[str, str]:
    """The canonical ``{"type", "message"}`` of an exception, even one whose ``__str__``
    raises or holds a lone surrogate."""
    try:
        message = str(exc)
    except Exception as inner:
        message = f"<str() of the exception raised {type(inner).__name__}>"
    return {"type": utf8_safe(type(exc).__name__), "message": utf8_safe(message)}


_PLUMBING = frozenset(
    {"harness_tui.engine.here", "harness_tui.workflow.refs", "harness_tui.engine.aio"}
)
"""Modules whose frames only carry a call to the task: left out of its traceback."""


def traceback_of(exc: BaseException) -> str:
    """The formatted traceback of a task's exception, from the task's own frame on (the
    harness's frames that called it are noise, and move whenever those files change)."""
    frames = exc.__traceback__
    while (
        frames is not None
        and frames.tb_next is not None
        and frames.tb_frame.f_globals.get("__name__") in _PLUMBING
    ):
        frames = frames.tb_next
    try:
        return utf8_safe("".join(tb.format_exception(type(exc), exc, frames)))
    except Exception as inner:  # a hostile exception may break formatting too
        return f"<the traceback could not be formatted: {type(inner).__name__}>"
