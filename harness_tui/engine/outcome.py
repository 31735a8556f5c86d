"""How an attempt ended: the value an executor reports (docs/executors.md)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

from .capture import AttemptLog

__all__ = ["CANCELLED", "ERROR", "INTERRUPTED", "OK", "TIMEOUT", "Outcome", "OutcomeKind"]


class OutcomeKind(StrEnum):
    """How an attempt ended."""

    OK = "ok"
    """It returned :attr:`Outcome.value`."""
    ERROR = "error"
    """It raised (:attr:`Outcome.error`), or could not be run at all."""
    TIMEOUT = "timeout"
    """It exceeded its ``timeout`` and was stopped or abandoned."""
    CANCELLED = "cancelled"
    """The run was stopped while it ran (or Ctrl+C reached it)."""


OK, ERROR, TIMEOUT, CANCELLED = OutcomeKind  # the hot path reads module names, not attributes


class Outcome(NamedTuple):
    """What one attempt produced. Picklable, so it can come back from another process.

    Attributes:
        kind: how it ended.
        value: the returned value when :attr:`OutcomeKind.OK` (a JSON value; checked at commit).
        error: ``{"type", "message"}`` when it failed or was cancelled (it enters the canonical
            trace: no addresses, host names or times).
        traceback: formatted traceback of an error (kept out of the canonical trace).
        worker: which worker ran the attempt when the executor knows better than the run
            (a cluster worker's number, from 1); None: the run's own thread or pool worker.
        log: what the attempt printed when it ran where the run's log could not see it (an
            attempt called in another process fills this in itself).
        calls: what the attempt was answered when it ran in another process
            (:meth:`~harness_tui.engine.recorded_calls.AttemptIO.report`), to be absorbed by
            the run's recorder of the attempt; None where it ran here or recorded nothing.
        exception: what an in-process task raised (for the article's ``run()``, whose
            final error names it as its ``__cause__``); None where it ran elsewhere.
        text: the value's canonical JSON where the executor holds it already (a replay's
            recorded output), committed as it stands; :attr:`value` is then not looked at.
    """

    kind: OutcomeKind
    value: Any = None
    error: dict[str, str] | None = None
    traceback: str | None = None
    worker: int | None = None
    log: AttemptLog | None = None
    exception: BaseException | None = None
    calls: dict[str, Any] | None = None
    text: str | None = None


INTERRUPTED = Outcome(
    CANCELLED,
    error={
        "type": "KeyboardInterrupt",
        "message": "interrupted (Ctrl+C, or the task raised KeyboardInterrupt)",
    },
)
"""A ``KeyboardInterrupt`` in an attempt: the run stops as when the user stops it."""
