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
    """The next attempt of a task, after ``interval`` seconds (the task's ``retry_interval``).

    The wait is not counted down: that would read the run's clock from the screen, and a fake
    clock (tests, screenshots) advances at every reading, so what the screen shows would
    change the timings it shows.
    """

    attempt: int
    attempts: int
    interval: float

    def sentence(self) -> str:
        """``retrying in 0.5 s (attempt 2 of 4)``."""
        of = f"(attempt {self.attempt} of {self.attempts})"
        return f"retrying in {self.interval:g} s {of}" if self.interval > 0 else f"retrying {of}"

    def short(self) -> str:
        """A status cell's worth: ``retry 2/4``."""
        return f"retry {self.attempt}/{self.attempts}"


def retry_wait(graph: TaskGraph, events: Sequence[TraceEvent]) -> RetryWait | None:
    """Whether a task whose events so far are ``events`` waits for its next attempt."""
    if not events:
        return None
    last = events[-1]
    if last.status not in _FAILED_ATTEMPT or ends_task(graph, last):
        return None
    node = graph[last.task]
    attempts = node.max_retries + 1
    if last.attempt >= attempts:
        return None  # the fallback runs next, not an attempt
    return RetryWait(last.attempt + 1, attempts, float(node.retry_interval or 0.0))


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
