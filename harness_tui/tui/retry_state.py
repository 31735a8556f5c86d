"""A task between two attempts, as people read it: "retrying in 0.5 s (attempt 2 of 4)".

No Textual here. A task is retrying when its last event shown is a failed (or timed out)
attempt that is not its last one (:func:`~harness_tui.engine.events.ends_task`): the
orchestrator waits ``retry_interval`` on the run's clock, then starts the next attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.events import Status, TraceEvent, ends_task
from ..engine.graph import TaskGraph

__all__ = ["Attempt", "RetryWait", "attempts_of", "retry_wait"]

_FAILED_ATTEMPT = (Status.FAILED, Status.TIMED_OUT)


@dataclass(frozen=True, slots=True)
class RetryWait:
    """The next attempt of a task and how long until it starts (None: not counted, as in a
    replay or back in time)."""

    attempt: int
    attempts: int
    seconds: float | None

    def sentence(self) -> str:
        """``retrying in 0.5 s (attempt 2 of 4)``."""
        of = f"(attempt {self.attempt} of {self.attempts})"
        if self.seconds is None:
            return f"retrying {of}"
        if self.seconds <= 0:
            return f"retrying now {of}"
        return f"retrying in {self.seconds:.1f} s {of}"

    def short(self) -> str:
        """A status cell's worth: ``retry 2/4``."""
        return f"retry {self.attempt}/{self.attempts}"


def retry_wait(
    graph: TaskGraph, events: Sequence[TraceEvent], now: float | None
) -> RetryWait | None:
    """Whether a task whose events so far are ``events`` waits to retry, and for how long at
    ``now`` (the run's clock; None when not live)."""
    if not events:
        return None
    last = events[-1]
    if last.status not in _FAILED_ATTEMPT or ends_task(graph, last):
        return None
    node = graph[last.task]
    attempts = node.max_retries + 1
    if last.attempt >= attempts:
        return None  # the fallback runs next, not an attempt
    seconds: float | None = None
    if now is not None:
        ended = last.ended_at if last.ended_at is not None else now
        seconds = max(ended + (node.retry_interval or 0.0) - now, 0.0)
    return RetryWait(last.attempt + 1, attempts, seconds)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt of a task as the inspector lists it."""

    number: int
    outcome: str
    duration: float | None
    worker: int
    error: str


def attempts_of(events: Sequence[TraceEvent]) -> list[Attempt]:
    """A task's attempts (the fallback counts as one), from their final events."""
    listed = []
    for event in events:
        if event.status is Status.RUNNING or event.attempt == 0:
            continue
        error = event.error or {}
        kind, message = str(error.get("type", "")), str(error.get("message", ""))
        first = message.splitlines()[0] if message else ""
        line = f"{kind}: {first}" if kind else first
        listed.append(
            Attempt(event.attempt, event.status.value, event.duration, event.worker, line)
        )
    return listed
