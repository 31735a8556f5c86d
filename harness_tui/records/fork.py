"""Re-running a recorded run from a task (DESIGN.md "Re-running from a task").

Every task that is neither the chosen task nor its descendant keeps what the record says it
did: its attempts are replayed from the record (events, output, log) and its code does not
run. The chosen task and its descendants, and kept tasks the record shows ``cancelled``, run
with the current code. The payload is the record's. Since kept tasks replay their recorded
events and outputs, a fork whose re-run tasks produce the outputs a fresh run would has that
fresh run's trace and digest; what it was forked from is kept beside the digests.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..engine.attempt import Attempt, Executor, Outcome
from ..engine.capture import UNATTRIBUTED
from ..engine.clock import Clock, SystemClock
from ..engine.diff import json_changes
from ..engine.events import Status, ends_task
from ..engine.graph import TaskNode
from ..engine.recorded import RecordedExecutor
from ..engine.spec import task_spec
from ..workflow.errors import WorkflowError
from ..workflow.loader import Workflow
from ..workflow.python_source import load_python, python_spec
from .errors import RecordError
from .export import RunRecord

__all__ = ["Fork", "ForkError", "plan_fork"]


class ForkError(RecordError):
    """A run cannot be re-run from that task (unknown task, a kept task changed...)."""


@dataclass(frozen=True, slots=True)
class Fork:
    """What a re-run from ``task`` keeps and what it runs.

    Attributes:
        workflow: the workflow the fork runs (the record's, or the one given).
        payload: the record's payload.
        task: the task the fork re-runs from.
        kept: tasks replayed from the record instead of run.
        forked_from: ``(run digest, task)`` of the record, for the new run's export.
    """

    workflow: Workflow
    payload: Any
    task: str
    kept: frozenset[str]
    forked_from: tuple[str, str]
    record: RunRecord

    def executor(self, live: Executor | None = None) -> KeptExecutor:
        """An executor that replays the kept tasks' attempts and runs the others with
        ``live`` (default: in this process)."""
        logs = {k: v for k, v in self.record.logs.items() if k != UNATTRIBUTED}
        recorded = RecordedExecutor(self.record.events, self.record.outputs, logs)
        return KeptExecutor(recorded, live or Executor(), self.kept)


def plan_fork(record: RunRecord, task: str, workflow: Workflow | None = None) -> Fork:
    """Decide what a re-run of ``record`` from ``task`` keeps.

    Args:
        record: the run to fork (an export, or a stored run exported).
        task: the task to re-run from.
        workflow: the workflow to run instead of the record's own (the current file): any
            change to a kept task's spec or dependencies is refused.

    Raises:
        ForkError: the record is redacted, ``task`` is unknown, or a kept task changed.
    """
    name = record.source_name
    if record.redacted:
        raise ForkError(f"{name}: a redacted export cannot be re-run (its outputs were replaced)")
    recorded = record.workflow
    target = workflow if workflow is not None else _runnable(record, recorded)
    if task not in target.graph.nodes:
        raise ForkError(f"{name}: no task {task!r} in workflow {target.name!r}")
    rerun = {task, *target.graph.descendants(task)}
    final = {e.task: e.status for e in record.events if ends_task(recorded.graph, e)}
    kept = frozenset(
        t for t in target.graph.nodes
        if t not in rerun and t in final and final[t] is not Status.CANCELLED
    )  # fmt: skip
    if workflow is not None:
        _check_kept_unchanged(recorded, workflow, kept, task)
    return Fork(target, record.payload, task, kept, (record.digests["run"], task), record)


def _runnable(record: RunRecord, recorded: Workflow) -> Workflow:
    """The record's own workflow, with code to run: a workflow file's (its references import
    when they run), or a Python-defined one imported again from ``file.py:factory`` (its
    embedded spec has no code), refused when that module no longer matches the record."""
    if python_spec(recorded) is None:
        return recorded
    try:
        current = load_python(recorded.path)
    except WorkflowError as exc:
        raise ForkError(
            f"{record.source_name}: this run was defined in Python and {recorded.path} cannot "
            f"be loaded here ({exc.problems[0].message}); give --workflow FILE.py:factory"
        ) from None
    return current


def _comparable(node: TaskNode) -> dict[str, Any]:
    """A task's spec as a re-run compares it: references with or without the ``python:``
    mark of an embedded spec read the same."""
    spec = task_spec(node)
    for key in ("run", "fallback", "when"):
        value = spec[key]
        if isinstance(value, str):
            spec[key] = value.removeprefix("python:")
    return spec


def _check_kept_unchanged(recorded: Workflow, current: Workflow, kept: frozenset[str],
                          task: str) -> None:  # fmt: skip
    """Refuse a kept task whose spec (or dependencies) differs from the record's."""
    for name in sorted(kept, key=list(current.graph.nodes).index):
        old = _comparable(recorded.graph.nodes[name])
        new = _comparable(current.graph.nodes[name])
        if old != new:
            change = json_changes(old, new)[0]
            where = change["path"].removeprefix("$.")
            raise ForkError(
                f"{name} would be kept from the record but its {where} changed; re-run from "
                f"{name} or an ancestor of it (not {task})"
            )


class KeptExecutor(Executor):
    """Replays kept tasks' recorded attempts; runs every other task with the live executor.

    Retry intervals of a kept task are not waited again: :class:`ForkClock` asks
    :attr:`replaying` whether the attempt just executed was a replayed one.
    """

    name = "kept"

    def __init__(self, recorded: RecordedExecutor, live: Executor, kept: frozenset[str]) -> None:
        self.recorded = recorded
        self.live = live
        self.kept = kept
        self.replaying = False
        self.pickles = live.pickles

    def run(self, attempt: Attempt) -> Outcome:
        self.replaying = attempt.task in self.kept
        if self.replaying:
            return self.recorded.run(attempt)
        return self.live.run(attempt)

    def cancel(self, attempt: Attempt) -> None:
        self.live.cancel(attempt)

    def interrupt(self) -> None:
        """Ctrl+C: as the live executor takes it (a replayed attempt runs no code to stop)."""
        self.live.interrupt()

    def start(self) -> None:
        self.live.start()

    def close(self) -> None:
        self.live.close()


class ForkClock:
    """The system clock, except that waits between a kept task's replayed attempts are
    skipped (they were waited when the record was made)."""

    def __init__(self, executor: KeptExecutor, clock: Clock | None = None) -> None:
        self.executor = executor
        self.clock = clock if clock is not None else SystemClock()

    def now(self) -> float:
        return self.clock.now()

    def wall(self) -> float:
        return self.clock.wall()

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        if not self.executor.replaying:
            self.clock.sleep(seconds, cancel)

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        return self.clock.wait(done, timeout)


def kept_summary(fork: Fork, order: Mapping[str, int]) -> str:
    """``kept 3 tasks from the record (a, b, c)`` for people."""
    names = sorted(fork.kept, key=order.__getitem__)
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return f"kept {len(names)} task{'s' * (len(names) != 1)} from the record ({shown})"
