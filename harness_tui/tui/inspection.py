"""What the inspector shows for a task or an event, as of the trace position on screen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.events import FAILURE_STATUSES, TraceEvent
from ..engine.spec import DEFAULT_ISOLATION, TASK_FIELDS
from .call_text import field_diff, summary_line
from .looks import status_name
from .retry_state import Attempt, attempts_of
from .session import Session

LISTED_CALLS = 200
"""At most this many calls are listed in the inspector; the calls view shows them all."""


@dataclass(frozen=True, slots=True)
class CallsShown:
    """The inspector's ``calls`` section: an attempt's exchanges, one summary line each.

    Attributes:
        task: the task whose attempt it is.
        attempt: the attempt number.
        count: how many exchanges it has.
        lines: ``(seq, summary)`` of the first :data:`LISTED_CALLS` (visible text).
    """

    task: str
    attempt: int
    count: int
    lines: tuple[tuple[int, str], ...]


def calls_section(session: Session, task: str, attempt: int) -> list[tuple[str, Any]]:
    """The ``calls`` section of an attempt, when it has any."""
    if attempt < 1:
        return []
    exchanges = session.exchanges(task, attempt)
    if not exchanges:
        return []
    lines = tuple((e.seq, summary_line(e)) for e in exchanges[:LISTED_CALLS])
    return [("calls", CallsShown(task, attempt, len(exchanges), lines))]


def divergence_section(session: Session, event: TraceEvent) -> list[tuple[str, Any]]:
    """A diverged attempt's field diff against the nearest recorded request, when known."""
    if not event.error or event.error.get("type") != "CallDiverged":
        return []
    mismatch = session.mismatch(event.task, event.attempt)
    changes = [] if mismatch is None else mismatch.changes()
    return [("divergence", field_diff(changes))] if changes else []


def task_sections(session: Session, task: str) -> tuple[str, list[tuple[str, Any]]]:
    """Title and sections for a task: error, output, the calls of its latest attempt, the
    inputs it saw, spec, timings."""
    run = session.run
    snapshot = session.snapshot()
    step = run.plan.steps[run.plan.index_of[task]]
    status = status_name(session.status(task))
    graph = session.workflow.graph
    given = session.workflow.specs.get(task, {})
    spec = {name: given[name] for name in TASK_FIELDS if name in given}
    if spec.get("isolation") == DEFAULT_ISOLATION:
        del spec["isolation"]  # shown only when the task asks for a process
    # Numbered as the trace's seq column and the header number it.
    when_at = "now"
    if session.view_seq is not None:
        when_at = "at the start" if session.position < 0 else f"as of seq {session.position}"
    ancestors = sorted(graph.ancestors(task), key=run.plan.index_of.__getitem__)
    seen = {name: snapshot.output(name) for name in ancestors if snapshot.has_output(name)}
    events = snapshot.task_events(task)
    failure = next((e for e in reversed(events) if e.status in FAILURE_STATUSES), None)
    # What a person looks for first: what happened (error, output), then why (inputs, spec).
    head = {"name": task, "task_id": step.task_id, "index": step.index, "level": step.level,
            "status": status, "shown": when_at}  # fmt: skip
    retry = session.retry_wait(task)
    if retry is not None:
        head["status"] = f"{status}, {retry.sentence()}"
    sections: list[tuple[str, Any]] = [("task", head)]
    if failure is not None and failure.error:
        sections.append(("error", failure.error))
        sections.extend(divergence_section(session, failure))
        if failure.traceback:
            sections.append(("traceback", failure.traceback))
    if snapshot.has_output(task):
        sections.append(("output", snapshot.output(task)))
    sections.extend(calls_section(session, task, session.attempt_shown(task)))
    sections.append(("inputs", {"payload": session.payload, "results": seen}))
    sections.append(("spec", spec))
    listed = attempts_of(events)
    if listed:
        sections.append(("attempts", [_attempt(a) for a in listed]))
    glyph_status = f"{task} · {status}"
    return glyph_status, sections


def event_sections(session: Session, event: TraceEvent) -> tuple[str, list[tuple[str, Any]]]:
    """Title and sections for one trace event: canonical fields, its error (as a task's
    sections name it, so the full error view finds it), timing and traceback."""
    timing = _timing(event, _origin(session))
    sections: list[tuple[str, Any]] = [("event", event.canonical())]
    if event.error:
        sections.append(("error", event.error))
        sections.extend(divergence_section(session, event))
    sections.append(("timing", timing))
    if event.traceback:
        sections.append(("traceback", event.traceback))
    sections.extend(calls_section(session, event.task, event.attempt))
    return f"event {event.seq} · {event.task} · {event.status.value}", sections


def _attempt(attempt: Attempt) -> dict[str, Any]:
    """One attempt: outcome, duration, worker (0: the run's own thread), error line."""
    data: dict[str, Any] = {"attempt": attempt.number, "outcome": attempt.outcome}
    if attempt.duration is not None:
        data["duration_s"] = round(attempt.duration, 6)
    data["worker"] = attempt.worker
    if attempt.error:
        data["error"] = attempt.error
    return data


def _origin(session: Session) -> float | None:
    events = session.run.events
    return events[0].started_at if events else None


def _timing(event: TraceEvent, origin: float | None) -> dict[str, Any]:
    """Timing beside the canonical event: seconds from the run's first event."""
    data: dict[str, Any] = {"attempt": event.attempt, "status": event.status.value}
    if event.started_at is not None and origin is not None:
        data["started_s"] = round(event.started_at - origin, 6)
    if event.duration is not None:
        data["duration_s"] = round(event.duration, 6)
    return data
