"""What a reader sees of an export's long arrays (plan, trace, timings, attempts, results): the
events, the logs, the outputs, and the first claim of the arrays the trace contradicts. Made
from whole arrays (:class:`.record.RunRecord`) or a run of members at a time
(:mod:`.streamed`), by the same functions. And the workflow it embeds, parsed
(:func:`parse_embedded`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ...engine.canonical import check_json
from ...engine.capture import UNATTRIBUTED, AttemptLog
from ...engine.events import TraceEvent, events_from_records
from ...workflow.loader import Workflow, parse_shared
from ..errors import RecordError

__all__ = [
    "add_logs", "array_claim", "events_of", "outputs_of", "parse_embedded", "plan_claim",
    "with_stray",
]  # fmt: skip


def events_of(
    trace: Iterable[dict[str, Any]], timings: Mapping[int, dict[str, Any]]
) -> list[TraceEvent]:
    """The events of trace records (checked: their task and task id are strings), each with
    its timing (by sequence number) if it has one. Their task and task id are interned
    (:func:`sys.intern`): a parsed string is a new string each time, and a 100,000-task
    trace names each task and task id twice, as the plan does once more, and the other run
    of a diff again (at 100,000 tasks, some 25 MB a run)."""
    records = list(trace)
    timing = timings.get
    return events_from_records(records, [timing(event["seq"]) for event in records])


def add_logs(
    found: dict[tuple[str, int], AttemptLog], attempts: Iterable[Mapping[str, Any]]
) -> None:
    """Add what each attempt record printed or logged to ``found``, by ``(task, attempt)``."""
    for attempt in attempts:
        log = attempt.get("log")
        if log is not None:
            found[(attempt["task"], attempt["attempt"])] = AttemptLog(
                log["text"], bool(log.get("truncated"))
            )


def with_stray(
    stray: Mapping[str, Any] | None, found: Mapping[tuple[str, int], AttemptLog]
) -> dict[tuple[str, int], AttemptLog]:
    """The logs view: what threads wrote after their attempt ended (the export's
    ``unattributed_log``) under ``UNATTRIBUTED``, then each attempt's log in ``found``."""
    logs = {}
    if stray is not None:
        logs[UNATTRIBUTED] = AttemptLog(stray["text"], bool(stray.get("truncated")))
    logs.update(found)
    return logs


def outputs_of(results: Mapping[str, Any]) -> dict[str, str]:
    """Each committed output as canonical JSON text."""
    return {name: check_json(value) for name, value in results.items()}


def plan_claim(rows: Iterable[Mapping[str, Any]], start: int = 0) -> str | None:
    """The first plan row (numbered from ``start``) whose index is not its place, or None."""
    for position, row in enumerate(rows, start):
        if row["index"] != position:
            return f"plan row {position} has index {row['index']}"
    return None


def array_claim(
    plan: str | None,
    seqs: Iterable[int],
    events: list[TraceEvent],
    attempts: Iterable[tuple[str, int]],
) -> str | None:
    """What is wrong with the plan indexes (``plan``: :func:`plan_claim`), the timings'
    sequence numbers ``seqs`` or the ``(task, attempt)`` of the attempt records, checked
    against the trace's ``events`` (the first of them), or None."""
    if plan is not None:
        return plan
    count = len(events)
    seen: set[int] = set()
    for seq in seqs:
        if not 0 <= seq < count or seq in seen:
            what = "a second timing for" if seq in seen else "a timing for no"
            return f"{what} trace event (seq {_short(seq)})"
        seen.add(seq)
    ran = {(event.task, event.attempt) for event in events if event.attempt}
    for task, attempt in attempts:
        if (task, attempt) not in ran:
            return f"attempt {attempt} of {task!r} is not in the trace"
    return None


def _short(value: int) -> str:
    return str(value) if value.bit_length() < 200 else f"{str(value)[:12]}..."


def parse_embedded(workflow: Mapping[str, Any], name: str) -> Workflow:
    """The workflow an export embeds as YAML (its ``workflow`` member: ``source`` and
    ``path``), parsed once for every reader while one holds it
    (:func:`~harness_tui.workflow.loader.parse_shared`): ``module:function`` references
    resolve against the folder of the path it was loaded from. ``name``: the export's, for
    messages.

    Raises:
        RecordError: the path is not one this system can use.
        WorkflowError: the source is not a valid workflow.
    """
    path = workflow["path"]
    try:
        base = Path(path).resolve().parent if path != "<string>" else None
    except (OSError, ValueError, RuntimeError):  # a NUL, one the OS cannot resolve, a loop
        raise RecordError(f"{name}: workflow path {path!r} is not a usable path") from None
    return parse_shared(workflow["source"], path, base)
