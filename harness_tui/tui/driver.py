"""The run loop the workbench's thread worker executes: step, coalesce, stop where asked."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.message import Message

from ..engine.events import TraceEvent
from .messages import RunCompleted, RunPaused, StepFinished
from .session import Session

COALESCE_SECONDS = 0.05
"""At most one StepFinished per this many seconds while continuing (the UI stays smooth)."""


def drive(
    session: Session, mode: str, post: Callable[[Message], object], stop: Callable[[], bool]
) -> None:
    """Run one step (``mode="step"``) or continue until a breakpoint, a failure (when break
    on failure is on), ``stop()`` or the end, posting what happened."""
    run = session.run
    batch: list[TraceEvent] = []
    last_post = time.monotonic()
    reason, task = "paused", None
    first = True
    while not run.finished:
        upcoming = run.next_step
        if not first and upcoming is not None and session.should_stop_before(upcoming.task):
            reason, task = "breakpoint", upcoming.task
            break
        first = False
        events = run.step()
        batch.extend(events)
        if mode == "step":
            reason = "step"
            break
        if session.break_on_failure and session.is_failure(events):
            reason, task = "failure", events[-1].task
            break
        if stop():
            break
        now = time.monotonic()
        if now - last_post >= COALESCE_SECONDS:
            post(StepFinished(batch))
            batch, last_post = [], now
    if batch:
        post(StepFinished(batch))
    post(RunCompleted(run.status.value) if run.finished else RunPaused(reason, task))
