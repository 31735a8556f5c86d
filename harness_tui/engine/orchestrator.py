"""The task orchestrator: executes a plan task by task and records the trace.

``TaskOrchestrator(graph).start(payload)`` returns a :class:`Run`. ``run.step()`` executes the
next task of the plan (trigger rule, condition, every attempt with its retries, the fallback)
and returns the events it produced; ``run_to_end()`` and ``continue_(breakpoints)`` loop over
it. This is graphlib's ``get_ready -> done`` loop made step-wise, which is what a debugger needs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from .canonical import check_json, combine_digests, digest_text, loads
from .clock import Clock, SystemClock
from .events import FAILURE_STATUSES, OUTPUT_STATUSES, RunStatus, Status, TraceEvent
from .execution import StepExecution
from .executors import Executor, SerialExecutor
from .graph import TaskGraph
from .inputs import TaskInputs
from .scheduler import DeterministicScheduler, Plan, PlanStep
from .state import RunState, Snapshot

_new_event = tuple.__new__
_DONE = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED})

__all__ = ["Listener", "OnFailure", "ResumeError", "Run", "TaskInputs", "TaskOrchestrator"]

Listener = Callable[[TraceEvent], None]


class OnFailure(StrEnum):
    """What a run does once a task has finally failed."""

    STOP = "stop"
    """Cancel the remaining tasks; the run fails."""
    CONTINUE = "continue"
    """Independent branches go on; dependents become ``upstream_failed``."""


class ResumeError(ValueError):
    """Recorded events cannot be resumed against this workflow and payload."""


class TaskOrchestrator:
    """Executes a graph's plan task by task.

    Args:
        graph: a validated task graph.
        executor: how attempts run (default: :class:`SerialExecutor`).
        clock: where time comes from (default: :class:`SystemClock`).
        on_failure: ``stop`` or ``continue`` (see :class:`OnFailure`).
        listeners: called with every event as it happens.
    """

    def __init__(
        self,
        graph: TaskGraph,
        executor: Executor | None = None,
        clock: Clock | None = None,
        on_failure: OnFailure | str = OnFailure.STOP,
        listeners: Iterable[Listener] = (),
    ) -> None:
        self.graph = graph
        self.scheduler = DeterministicScheduler(graph)
        self.executor: Executor = executor if executor is not None else SerialExecutor()
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.on_failure = OnFailure(on_failure)
        self.listeners: list[Listener] = list(listeners)
        # Canonical params per task: the graph is immutable, so once per orchestrator.
        self._params_texts: dict[str, str] = {}

    def start(self, payload: Any, *, plan: Plan | None = None) -> Run:
        """Plan ``payload`` and return a :class:`Run` positioned before its first task."""
        return Run(self, plan if plan is not None else self.scheduler.plan(payload))

    def run(self, payload: Any) -> Run:
        """Start a run and execute it to the end."""
        run = self.start(payload)
        run.run_to_end()
        return run

    def resume(self, payload: Any, events: Sequence[TraceEvent], outputs: Mapping[str, str]) -> Run:
        """Rebuild a run from recorded events and outputs, ready to go on where it stopped.

        Events of a task whose final status was not recorded are dropped, so that task runs
        again from its first attempt and the finished trace equals an uninterrupted one.

        Raises:
            ResumeError: the events do not follow this workflow's plan for ``payload``.
        """
        run = self.start(payload)
        run._restore(events, outputs)
        return run


class Run(StepExecution):
    """One execution of a plan, advanced a task at a time. Not thread-safe, except
    :meth:`cancel` and :meth:`request_pause`, which may be called from any thread."""

    def __init__(self, orchestrator: TaskOrchestrator, plan: Plan) -> None:
        self.orchestrator = orchestrator
        self.graph = orchestrator.graph
        self.plan = plan
        self.payload_text = plan.payload_text
        self.payload_digest = digest_text(check_json(loads(plan.payload_text)))
        self.state = RunState()
        self.status = RunStatus.PENDING
        self.listeners: list[Listener] = list(orchestrator.listeners)
        self._cursor = 0
        self._stopping = False
        self._cancel = threading.Event()
        self._pause = threading.Event()
        self._now = orchestrator.clock.now
        self._steps = plan.steps
        self._total = len(plan.steps)

    # -- position ---------------------------------------------------------------------------

    @property
    def payload(self) -> Any:
        """A fresh copy of the run's payload."""
        return loads(self.payload_text)

    @property
    def cursor(self) -> int:
        """How many plan steps are done."""
        return self._cursor

    @property
    def finished(self) -> bool:
        """True once every task has a final status or the run was cancelled."""
        return self.status in _DONE

    @property
    def next_step(self) -> PlanStep | None:
        """The plan step that :meth:`step` would execute, or None when finished."""
        if self.finished or self._cursor >= len(self.plan):
            return None
        return self.plan[self._cursor]

    @property
    def events(self) -> Sequence[TraceEvent]:
        """The trace so far."""
        return self.state.events

    def snapshot(self, seq: int | None = None) -> Snapshot:
        """The run as of trace position ``seq`` (O(1), a view)."""
        return self.state.snapshot(seq)

    # -- control ----------------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener`` with every future event."""
        self.listeners.append(listener)

    def cancel(self) -> None:
        """Stop the run: the attempt in progress (if any) and every remaining task are
        recorded ``cancelled``. Safe to call from another thread."""
        self._cancel.set()
        self.orchestrator.executor.cancel()

    def request_pause(self) -> None:
        """Make a running :meth:`continue_` return after the current step (any thread)."""
        self._pause.set()

    def step(self) -> list[TraceEvent]:
        """Execute the next task of the plan; return the events it produced."""
        if self.status in _DONE:
            return []
        first = len(self.state.events)
        self.status = RunStatus.RUNNING
        if self._cancel.is_set() or self._stopping:
            self._cancel_remaining()
        else:
            step = self._steps[self._cursor]
            self._cursor += 1
            final = self._execute(step)
            if final is Status.CANCELLED:
                self._cancel_remaining()
            elif final in FAILURE_STATUSES and self.orchestrator.on_failure is OnFailure.STOP:
                self._stopping = True
                self._cancel_remaining()
        if self._cursor >= self._total and self.status not in _DONE:
            self._finish()
        return self.state.events[first:]

    def run_to_end(self) -> Run:
        """Execute every remaining task."""
        while not self.finished:
            self.step()
        return self

    def continue_(
        self, breakpoints: Collection[str] = (), *, break_on_failure: bool = False
    ) -> list[TraceEvent]:
        """Step until the next task is a breakpoint, a step failed, a pause was requested, or
        the run finished. The current task runs even if it is a breakpoint (you are on it)."""
        self._pause.clear()
        produced: list[TraceEvent] = []
        first = True
        while not self.finished:
            upcoming = self.next_step
            if not first and upcoming is not None and upcoming.task in breakpoints:
                break
            first = False
            events = self.step()
            produced.extend(events)
            if self._pause.is_set():
                break
            if break_on_failure and any(e.status in FAILURE_STATUSES for e in events):
                break
        return produced

    # -- results ----------------------------------------------------------------------------

    @property
    def results(self) -> dict[str, Any]:
        """Committed outputs by task name, in plan order (fresh copies)."""
        return {name: commit.value() for name, commit in self.state.commits.items()}

    def canonical_trace(self) -> list[dict[str, Any]]:
        """The canonical trace as JSON objects."""
        return self.state.canonical_trace()

    def digests(self) -> dict[str, str]:
        """Digests of payload, plan, trace, results, and the run digest over all four."""
        parts = {
            "payload": self.payload_digest,
            "plan": self.plan.digest,
            "trace": self.state.trace_digest(),
            "results": self.state.results_digest(),
        }
        return {**parts, "run": combine_digests(parts)}

    @property
    def digest(self) -> str:
        """The run digest: a pure function of workflow, payload and task outputs (I3)."""
        return self.digests()["run"]

    # -- execution --------------------------------------------------------------------------

    def _emit(
        self,
        step: PlanStep,
        status: Status,
        attempt: int,
        started_at: float | None = None,
        error: dict[str, str] | None = None,
        input_digest: str | None = None,
        output_digest: str | None = None,
        traceback: str | None = None,
    ) -> TraceEvent:
        now = self._now()
        event = _new_event(
            TraceEvent,
            (
                len(self.state.events),
                step.task,
                step.task_id,
                status,
                attempt,
                error,
                input_digest,
                output_digest,
                now if started_at is None else started_at,
                None if status is Status.RUNNING else now,
                traceback,
            ),
        )
        self.state.append_next(event)
        for listener in self.listeners:
            listener(event)
        return event

    def _cancel_remaining(self) -> None:
        while self._cursor < len(self.plan):
            step = self.plan[self._cursor]
            self._cursor += 1
            self._emit(step, Status.CANCELLED, 0)
        self._finish()

    def _finish(self) -> None:
        if self._cancel.is_set():
            self.status = RunStatus.CANCELLED
            return
        failed = any(
            (event := self.state.last_event(s.task)) is not None
            and event.status
            in (Status.FAILED, Status.TIMED_OUT, Status.UPSTREAM_FAILED, Status.CANCELLED)
            for s in self.plan
        )
        self.status = RunStatus.FAILED if failed else RunStatus.SUCCEEDED

    def _restore(self, events: Sequence[TraceEvent], outputs: Mapping[str, str]) -> None:
        """Load recorded events (see :meth:`TaskOrchestrator.resume`)."""
        cursor = 0
        pending: list[TraceEvent] = []
        for position, event in enumerate(events):
            if event.seq != position:
                raise ResumeError(f"event {position} has seq {event.seq}")
            if cursor >= len(self.plan):
                raise ResumeError(f"event {event.seq} ({event.task}) is beyond the plan")
            step = self.plan[cursor]
            if event.task != step.task or event.task_id != step.task_id:
                raise ResumeError(
                    f"event {event.seq} is for {event.task} ({event.task_id}) but the plan has "
                    f"{step.task} ({step.task_id}) at position {cursor}"
                )
            pending.append(event)
            if self.ends_task(event):
                for kept in pending:
                    if kept.status in OUTPUT_STATUSES:
                        text = outputs.get(kept.task)
                        if text is None or digest_text(text) != kept.output_digest:
                            raise ResumeError(
                                f"the committed output of {kept.task} is missing or altered"
                            )
                        self.state.commit(kept.task, kept.seq, text, digest_text(text))
                    self.state.append(kept)
                pending.clear()
                cursor += 1
                stop_mode = self.orchestrator.on_failure is OnFailure.STOP
                if event.status in FAILURE_STATUSES and stop_mode:
                    self._stopping = True
                if event.status is Status.CANCELLED and event.attempt > 0:
                    self._cancel.set()  # the user stopped this run: it stays cancelled
        self._cursor = cursor
        if cursor:
            self.status = RunStatus.RUNNING
        if cursor >= len(self.plan):
            self._finish()

    def ends_task(self, event: TraceEvent) -> bool:
        """Whether ``event`` is its task's final event (no attempt or fallback follows)."""
        status = event.status
        if status is Status.RUNNING:
            return False
        if status not in FAILURE_STATUSES:
            return True
        node = self.graph[event.task]
        attempts = node.max_retries + 1
        if event.attempt == 0 or event.attempt > attempts:
            return True  # a condition error, or the fallback itself failed
        return event.attempt == attempts and node.fallback is None
