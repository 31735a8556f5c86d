"""Replaying a recorded run: an executor that returns what the record says happened, so a
replay goes through the very same orchestrator code path without importing or running any
user code (I6)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .attempt import CANCELLED, ERROR, OK, Attempt, Executor, Outcome, OutcomeKind
from .capture import AttemptLog
from .events import Status, TraceEvent

__all__ = ["RecordedExecutor"]


class RecordedExecutor(Executor):
    """Replays recorded attempt outcomes instead of running code.

    Args:
        events: the recorded trace.
        outputs: committed outputs by task name, as canonical JSON text.
        logs: what each ``(task, attempt)`` printed, replayed into the attempt's log.
    """

    name = "recorded"
    isolatable = False  # a replay runs no code, in this process or any other

    def __init__(
        self,
        events: Iterable[TraceEvent],
        outputs: Mapping[str, str],
        logs: Mapping[tuple[str, int], AttemptLog] | None = None,
    ) -> None:
        self._logs = logs or {}
        self._terminal: dict[tuple[str, int], TraceEvent] = {}
        for event in events:
            if event.status is not Status.RUNNING and event.attempt > 0:
                self._terminal[(event.task, event.attempt)] = event
        self._outputs = outputs

    def run(self, attempt: Attempt) -> Outcome:
        """The recorded outcome of this task's attempt (and its recorded log)."""
        key = (attempt.task, attempt.number)
        log = self._logs.get(key)
        if log is not None and attempt.log is not None:
            attempt.log.load(log)
        event = self._terminal.get(key)
        if event is None:
            return Outcome(
                ERROR,
                error={
                    "type": "ReplayDivergence",
                    "message": f"the record has no attempt {attempt.number} of {attempt.task!r}",
                },
            )
        if event.status in (Status.SUCCEEDED, Status.FALLBACK):
            return Outcome(OK, text=self._outputs[attempt.task])  # canonical, as recorded
        if event.status is Status.TIMED_OUT:
            return Outcome(OutcomeKind.TIMEOUT)
        if event.status is Status.CANCELLED:
            return Outcome(CANCELLED, error=dict(event.error) if event.error else None)
        return Outcome(ERROR, error=dict(event.error or {"type": "Error", "message": ""}))
