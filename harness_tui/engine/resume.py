"""Resuming a run: recorded events and outputs loaded into a fresh run's state, checked
against its plan, so the run goes on where the record stopped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .canonical import digest_text
from .context import RunContext
from .errors import HarnessError
from .events import FAILURE_STATUSES, OUTPUT_STATUSES, Status, TraceEvent, ends_task

__all__ = ["Restored", "ResumeError", "restore"]


class ResumeError(HarnessError, ValueError):
    """Recorded events cannot be resumed against this workflow and payload."""


class Restored(NamedTuple):
    """Where a restored run stands.

    Attributes:
        cursor: plan steps whose final event was recorded.
        failed: a task finally failed (in ``stop`` mode the rest is cancelled).
        cancelled: the user had stopped the run; it stays cancelled.
    """

    cursor: int
    failed: bool
    cancelled: bool


def restore(
    context: RunContext,
    events: Sequence[TraceEvent],
    outputs: Mapping[str, str],
    trace_hash: Any = None,
) -> Restored:
    """Append the recorded events of every finished task to ``context.state``.

    Events of a task whose final event was not recorded are dropped, so that task runs again
    from its first attempt and the finished trace equals an uninterrupted one. ``trace_hash``:
    the running hash of the events' recorded canonical texts (see
    :meth:`~.state.RunState.adopt_trace_hash`), taken when every event is kept.

    Raises:
        ResumeError: the events do not follow the plan, or an output is missing or altered.
    """
    plan, state = context.plan, context.state
    cursor = 0
    failed = cancelled = False
    pending: list[TraceEvent] = []
    for position, event in enumerate(events):
        if event.seq != position:
            raise ResumeError(f"event {position} has seq {event.seq}")
        if cursor >= len(plan):
            raise ResumeError(f"event {event.seq} ({event.task}) is beyond the plan")
        step = plan[cursor]
        if event.task != step.task or event.task_id != step.task_id:
            raise ResumeError(
                f"event {event.seq} is for {event.task} ({event.task_id}) but the plan has "
                f"{step.task} ({step.task_id}) at position {cursor}"
            )
        pending.append(event)
        if not ends_task(context.graph, event):
            continue
        for kept in pending:
            if kept.status in OUTPUT_STATUSES:
                text = outputs.get(kept.task)
                digest = "" if text is None else digest_text(text)
                if text is None or digest != kept.output_digest:
                    raise ResumeError(f"the committed output of {kept.task} is missing or altered")
                state.commit(kept.task, kept.seq, text, digest)
            state.append(kept)
        pending.clear()
        cursor += 1
        failed = failed or event.status in FAILURE_STATUSES
        if event.status is Status.CANCELLED and event.attempt > 0:
            cancelled = True  # the user stopped this run: it stays cancelled
    if trace_hash is not None:
        state.adopt_trace_hash(trace_hash, len(events))
    return Restored(cursor, failed, cancelled)
