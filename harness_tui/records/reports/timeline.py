"""What ran when: each attempt's wall-clock span and worker, from a trace's timings (a live
run's, or an export's recorded ones). The timeline view and reports draw these."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...engine.events import Status, TraceEvent

__all__ = ["Span", "attempt_spans"]


@dataclass(frozen=True, slots=True)
class Span:
    """One attempt on the wall clock.

    Attributes:
        task: the task.
        attempt: the attempt number (the fallback's too).
        status: how it ended (``running`` while it runs).
        start: epoch seconds it started.
        end: epoch seconds it ended (``now`` for one still running).
        worker: which worker ran it (0: the run's own thread).
    """

    task: str
    attempt: int
    status: Status
    start: float
    end: float
    worker: int


def attempt_spans(events: Sequence[TraceEvent], now: float | None = None) -> list[Span]:
    """The spans of every attempt in ``events`` (those without wall times are left out), in
    the order they ended; an attempt still running ends at ``now`` (if given)."""
    opened: dict[tuple[str, int], TraceEvent] = {}
    spans: list[Span] = []
    for event in events:
        key = (event.task, event.attempt)
        if event.status is Status.RUNNING:
            opened[key] = event
            continue
        if event.attempt == 0 or event.wall is None:
            continue  # nothing ran (skipped, upstream failed, cancelled before starting)
        start = opened.pop(key, None)
        if start is not None and start.wall is not None:
            begin = start.wall
        else:  # a fallback has no running event: its clock duration says when it began
            begin = event.wall - (event.duration or 0.0)
        spans.append(Span(event.task, event.attempt, event.status, begin, event.wall,
                          event.worker))  # fmt: skip
    if now is not None:
        for (task, attempt), event in opened.items():
            if event.wall is not None:
                spans.append(Span(task, attempt, Status.RUNNING, event.wall, now, event.worker))
    return spans
