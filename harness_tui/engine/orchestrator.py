"""The task orchestrator: executes a plan task by task and records the trace.

``TaskOrchestrator(graph).start(payload)`` returns a :class:`Run`. ``run.step()`` executes the
next task of the plan (trigger rule, condition, every attempt with its retries, the fallback)
and returns the events it produced: the one primitive. Loops over it (continue, breakpoints,
pause) live in :class:`~harness_tui.engine.driver.Driver`, which every front end shares.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from . import alarm
from .attempt import Executor, interrupt_here, refuse_unpicklable
from .canonical import combine_digests, loads
from .capture import DEFAULT_LOG_LIMIT, UNATTRIBUTED, AttemptLog, LogListener
from .clock import Clock, SystemClock
from .context import Listener, RunContext
from .driver import Driver
from .errors import TaskFailedError
from .events import (
    FAILURE_STATUSES,
    RUN_FAILING_STATUSES,
    RunStatus,
    Status,
    TraceEvent,
    ends_task,
)
from .graph import OnFailure, TaskGraph, Trigger
from .parallel import ParallelPool
from .recorded_calls import CallMode, CallSession, Exchange, Mismatch
from .resume import ResumeError, restore
from .scheduler import DeterministicScheduler, Plan, PlanStep, Scheduler, plan_with
from .state import RunState, Snapshot
from .step import StepRunner

_DONE = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED})

__all__ = [
    "Listener",
    "OnFailure",
    "ResumeError",
    "RetiredStep",
    "Run",
    "TaskOrchestrator",
]


class RetiredStep(NamedTuple):
    """A plan step whose final event entered the trace, with everything it committed.

    Attributes:
        step: the plan step.
        events: its events, in order (the last one carries the final status).
        output: the committed output as canonical JSON, or None.
        output_digest: sha256 of :attr:`output`, or None.
        logs: ``(attempt, log)`` of each of its attempts that printed or logged anything.
        canonical: the canonical JSON text of each of :attr:`events` (computed once, for the
            run's trace digest and for every listener).
        calls: ``(attempt, exchanges)`` of each of its attempts that recorded calls.
    """

    step: PlanStep
    events: tuple[TraceEvent, ...]
    output: str | None
    output_digest: str | None
    logs: tuple[tuple[int, AttemptLog], ...]
    canonical: tuple[str, ...]
    calls: tuple[tuple[int, tuple[Exchange, ...]], ...] = ()

    @property
    def status(self) -> Status:
        """The step's final status."""
        return self.events[-1].status


RetireListener = Callable[[RetiredStep], None]


class TaskOrchestrator:
    """Executes a graph's plan task by task.

    ``TaskOrchestrator(graph, scheduler).run(payload)`` is the article's call and returns its
    ``{"payload", "results", "trace"}``; :meth:`start` returns a :class:`Run` to step.

    Args:
        graph: a validated task graph.
        scheduler: the scheduler to plan with (default: a :class:`DeterministicScheduler` over
            ``graph``); any object with the article's ``build_plan(payload)`` whose order is
            a topological order of ``graph`` (see :func:`~.scheduler.plan_with`).
        executor: where attempts run (default: here, in the thread that runs the task; see
            docs/executors.md). One that pickles attempts refuses, here, a graph with a
            callable it cannot send (an :class:`~harness_tui.engine.attempt.ExecutorError`).
        clock: where time comes from (default: :class:`SystemClock`).
        on_failure: ``stop`` or ``continue`` (see :class:`OnFailure`).
        listeners: called with every event as it happens.
        cleanups_on_stop: after a stop (a final failure in ``stop`` mode, or the user's),
            ``trigger: all_done`` tasks still run (docs/architecture.md, "Stop and cleanup");
            False is the rule of exports written before format 1.1, where everything was
            cancelled.
        log_limit: characters of output (stdout, stderr, ``logging``) kept per attempt, or
            None to capture nothing (output then goes where it would without the harness).
        workers: tasks run at once, in threads (docs/parallel.md): each dispatched as soon as
            its dependencies completed, lowest plan index first, and retired in plan order,
            so the trace and every digest are the serial run's. 1 runs each task in the
            caller's thread.
    """

    def __init__(
        self,
        graph: TaskGraph,
        scheduler: Scheduler | None = None,
        *,
        executor: Executor | None = None,
        clock: Clock | None = None,
        on_failure: OnFailure | str = OnFailure.STOP,
        listeners: Iterable[Listener] = (),
        cleanups_on_stop: bool = True,
        log_limit: int | None = DEFAULT_LOG_LIMIT,
        workers: int = 1,
    ) -> None:
        if log_limit is not None and log_limit < 0:
            raise ValueError(f"log_limit must be at least 0, not {log_limit}")
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        self.log_limit = log_limit
        self.graph = graph
        self.scheduler: Scheduler = (
            scheduler if scheduler is not None else DeterministicScheduler(graph)
        )
        self.executor: Executor = executor if executor is not None else Executor()
        self._admitted = -1  # tasks of the graph the executor last admitted
        self._admit()
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.on_failure = OnFailure(on_failure)
        self.listeners: list[Listener] = list(listeners)
        self.cleanups_on_stop = cleanups_on_stop
        # Canonical params per task: the graph is immutable, so once per orchestrator.
        self.params_texts: dict[str, str] = {}

    def _admit(self) -> None:
        """Refuse now, in one line, a task an executor that pickles attempts could not send;
        again when tasks were added since (the article's graph grows by ``add_task``)."""
        if self._admitted == len(self.graph):
            return
        if self.executor.pickles:
            refuse_unpicklable(self.graph, self.executor.name or type(self.executor).__name__)
        self._admitted = len(self.graph)

    def start(
        self, payload: Any, *, plan: Plan | None = None, calls: CallSession | None = None
    ) -> Run:
        """Plan ``payload`` and return a :class:`Run` positioned before its first task.

        Args:
            plan: the plan to follow (default: planned from ``payload``).
            calls: record what the outside world answers each attempt, and answer from an
                earlier recording (see :mod:`.recorded_calls`); None: neither.
        """
        self._admit()
        deterministic = plan is None and type(self.scheduler) is DeterministicScheduler
        if plan is None:
            plan = plan_with(self.scheduler, self.graph, payload)
        run = Run(self, plan, calls)
        run.plan_is_deterministic = deterministic
        return run

    def run(self, payload: Any, *, calls: CallSession | None = None) -> dict[str, Any]:
        """Run every task; return ``{"payload", "results", "trace"}`` (the article's call).
        ``calls``: as for :meth:`start`.

        Raises:
            TaskFailedError: a task still failed after its retries (a ``RuntimeError``).
        """
        run = self.start(payload, calls=calls)
        run.context.returned = {}  # results keep the key order tasks returned, as printed
        result = run.run_to_end().outcome()
        result["payload"] = loads(json.dumps(payload, ensure_ascii=False))
        return result

    def resume(
        self,
        payload: Any,
        events: Sequence[TraceEvent],
        outputs: Mapping[str, str],
        trace_hash: Any = None,
    ) -> Run:
        """Rebuild a run from recorded events and outputs, ready to go on where it stopped.

        Events of a task whose final status was not recorded are dropped, so that task runs
        again from its first attempt and the finished trace equals an uninterrupted one.
        ``trace_hash``: sha256 of ``[`` and the events' canonical texts as recorded,
        comma-separated (a store's), so that the trace digest does not encode them again.

        Raises:
            ResumeError: the events do not follow this workflow's plan for ``payload``.
        """
        run = self.start(payload)
        run._resume_from(events, outputs, trace_hash)
        return run


class Run:
    """One execution of a plan, advanced a task at a time. Not thread-safe, except
    :meth:`cancel`, which may be called from any thread.

    The run owns its context (the shared state) and a step runner (the policies); it keeps
    the position in the plan and the run's status.
    """

    def __init__(
        self, orchestrator: TaskOrchestrator, plan: Plan, calls: CallSession | None = None
    ) -> None:
        self.orchestrator = orchestrator
        self.graph = orchestrator.graph
        self.plan = plan
        self.plan_is_deterministic = False
        """The run planned its payload itself, with the deterministic scheduler: its plan is
        the one a reader derives from the workflow and the payload (not one it was given to
        follow, nor a custom scheduler's)."""
        self.context = RunContext(
            orchestrator.graph,
            plan,
            orchestrator.clock,
            orchestrator.executor,
            list(orchestrator.listeners),
            orchestrator.params_texts,
            orchestrator.log_limit,
            calls,
        )
        self._runner = StepRunner(self.context)
        self.status = RunStatus.PENDING
        self._retire_listeners: list[RetireListener] = []
        self._cursor = 0
        self._stopping = False  # stopped: what has not started is cancelled, cleanups run
        self._stops = 0  # a final failure in stop mode and each user stop count one
        self._user_stopped = False
        self._steps = plan.steps
        self._total = len(plan.steps)
        self._pool: ParallelPool | None = None
        self._breakpoints: Collection[str] | None = ()
        self.workers = orchestrator.workers
        self._stop_before: frozenset[int] = frozenset()
        alarm.prepare()  # timeouts on the main thread: the SIGALRM handler, once per run

    # -- identity and position --------------------------------------------------------------

    @property
    def state(self) -> RunState:
        """The append-only log (engine-internal: front ends read :meth:`snapshot`)."""
        return self.context.state

    @property
    def clock(self) -> Clock:
        """The run's clock."""
        return self.context.clock

    @property
    def payload_text(self) -> str:
        """The payload's canonical JSON."""
        return self.context.payload_text

    @property
    def payload_digest(self) -> str:
        """sha256 of the payload's canonical JSON."""
        return self.context.payload_digest

    @property
    def payload(self) -> Any:
        """A fresh copy of the run's payload."""
        return loads(self.context.payload_text)

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
        if self.finished or self._cursor >= self._total:
            return None
        return self._steps[self._cursor]

    @property
    def events(self) -> Sequence[TraceEvent]:
        """The trace so far."""
        return self.context.state.events

    def snapshot(self, seq: int | None = None) -> Snapshot:
        """The run as of trace position ``seq`` (O(1), a view)."""
        return self.context.state.snapshot(seq)

    def task_status(self, task: str) -> Status | None:
        """A task's latest status, or None before its first event."""
        return self.context.state.status(task)

    def output_text(self, task: str) -> str | None:
        """A task's committed output as canonical JSON, or None."""
        commit = self.context.state.commits.get(task)
        return commit.text if commit is not None else None

    def output_texts(self) -> dict[str, str]:
        """Every committed output as canonical JSON, by task, in plan order."""
        return {name: commit.text for name, commit in self.context.state.commits.items()}

    def log(self, task: str, attempt: int) -> AttemptLog | None:
        """What an attempt printed or logged so far (it may still be running): empty when it
        wrote nothing or has not started, None when output is not captured. Never part of a
        digest."""
        buffer = self.context.logs.get((task, attempt))
        if buffer is not None:
            return buffer.snapshot()
        return None if self.context.log_limit is None else AttemptLog("")

    def logs(self) -> dict[tuple[str, int], AttemptLog]:
        """Every attempt's captured output that is not empty, by ``(task, attempt)``."""
        return {
            key: buffer.snapshot()
            for key, buffer in self.context.logs.items()
            if len(buffer) or buffer.truncated
        }

    def unattributed_log(self) -> AttemptLog:
        """Output of threads that went on writing after the attempt that started them ended."""
        return self.context.unattributed.snapshot()

    def recordings(self) -> dict[tuple[str, int], list[Exchange]]:
        """What the outside world answered each attempt, by ``(task, attempt)`` (threads outside
        any attempt under ``("", 0)``); empty when the run records nothing. Never part of a
        digest."""
        calls = self.context.calls
        return {} if calls is None else calls.recordings()

    def exchanges(self, task: str, attempt: int) -> tuple[Exchange, ...]:
        """What the outside world answered one attempt so far, in sequence order (empty when
        the run records nothing)."""
        calls = self.context.calls
        return () if calls is None else calls.exchanges(task, attempt)

    def call_mismatch(self, task: str, attempt: int) -> Mismatch | None:
        """The request of an attempt that its recording could not answer (it diverged), with
        the nearest recorded one; None when it did not diverge or the run answers nothing."""
        calls = self.context.calls
        return None if calls is None else calls.mismatch(task, attempt)

    def load_recordings(self, recordings: Mapping[tuple[str, int], Sequence[Exchange]]) -> None:
        """Take the recorded calls of attempts that ran before (a restored or resumed run): the
        run records its further attempts too."""
        if not recordings:
            return
        if self.context.calls is None:
            self.context.calls = CallSession(CallMode.LIVE)
        self.context.calls.load(recordings)

    def record_calls(self, session: CallSession) -> None:
        """Record (and answer) further attempts under ``session``, keeping what the run
        recorded so far (a resumed run told to record) and the headers it kept out."""
        before = self.context.calls
        if before is not None:
            session.load(before.recordings())
            session.secret_headers |= before.secret_headers
        self.context.calls = session

    @property
    def records_calls(self) -> bool:
        """Whether the run records what its attempts are answered."""
        calls = self.context.calls
        return calls is not None and calls.record

    def add_log_listener(self, listener: LogListener) -> None:
        """Call ``listener(task, attempt, text)`` with every piece of output as it is captured
        (from the thread that wrote it; it must not block)."""
        self.context.log_listeners.append(listener)

    def load_logs(self, logs: Mapping[tuple[str, int], AttemptLog]) -> None:
        """Take recorded logs of attempts that ran before (a restored or resumed run), and the
        run's unattributed output under :data:`~.capture.UNATTRIBUTED`."""
        context = self.context
        for (task, attempt), log in logs.items():
            if (task, attempt) == UNATTRIBUTED:
                context.unattributed.load(log)
                continue
            buffer = context.new_log(task, attempt)
            if buffer is not None:
                buffer.load(log)
                buffer.close()

    def final_events(self) -> list[TraceEvent]:
        """The final event of every task that has one, in trace order."""
        graph = self.graph
        return [e for e in self.events if e.status is not Status.RUNNING and ends_task(graph, e)]

    # -- control ----------------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener`` with every future event."""
        self.context.listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener`` (no error if it is gone already)."""
        if listener in self.context.listeners:
            self.context.listeners.remove(listener)

    @property
    def listener_errors(self) -> list[Exception]:
        """Exceptions raised by listeners; each such listener was removed, the run went on."""
        return self.context.listener_errors

    def on_retire(self, listener: RetireListener) -> None:
        """Call ``listener`` with every step that retires from now on."""
        self._retire_listeners.append(listener)

    @property
    def cancelled(self) -> bool:
        """Whether the user asked the run to stop."""
        return self.context.cancelled.is_set()

    def cancel(self) -> None:
        """Stop the run: the attempt in progress (if any) and every task not yet started are
        recorded ``cancelled``, except ``all_done`` cleanups, which still run; a second stop
        cancels those too. Safe to call from another thread."""
        self._stops += 1
        context = self.context
        context.cancelled.set()
        attempt = context.attempt
        if attempt is not None:
            attempt.cancel()
            context.executor.cancel(attempt)
        pool = self._pool
        if pool is not None:
            pool.cancel(keep_cleanups=self.orchestrator.cleanups_on_stop and self._stops < 2)

    def interrupt(self) -> None:
        """Ctrl+C, from the main thread's SIGINT handler, after :meth:`cancel`: the executor
        is told, and an attempt running on this very thread is interrupted by the
        ``KeyboardInterrupt`` this raises (recorded ``cancelled``)."""
        self.context.executor.interrupt()
        interrupt_here()

    def stop_before(self, positions: Collection[int]) -> None:
        """Stop the run, as the user's stop does, just before each of these plan positions
        where it would otherwise start the task: what a replay does where its record shows a
        task cancelled before it started (the user stopped the run between two tasks). The
        position past the last task (``len(plan)``) stops the run as it ends: its status is
        ``cancelled``, as a record says of a run stopped while its last task ran."""
        self._stop_before = frozenset(positions)

    def _would_start(self, step: PlanStep) -> bool:
        """Whether :meth:`step` would start ``step``'s task rather than cancel it unstarted."""
        if not (self._stopping or self.context.cancelled.is_set()):
            return True
        cleanups = self.orchestrator.cleanups_on_stop and self._stops < 2
        return cleanups and self.graph.nodes[step.task].trigger is Trigger.ALL_DONE

    def in_flight(self) -> tuple[str, ...]:
        """With workers: the tasks running now ahead of their turn to retire (their events
        are not in the trace yet). Safe to call from another thread."""
        pool = self._pool
        return () if pool is None else tuple(pool.in_flight())

    def hold_dispatch(self, breakpoints: Collection[str] | None) -> None:
        """With workers: start nothing at or past the first of ``breakpoints`` after the
        next task (the driver's breakpoints; serial runs start nothing ahead anyway); None:
        start nothing new until the next :meth:`step` (a drive that returned). Jobs already
        running go on."""
        self._breakpoints = breakpoints
        pool = self._pool
        if pool is not None:
            pool.hold(breakpoints, self._cursor)

    def step(self) -> list[TraceEvent]:
        """Execute the next task of the plan; return the events it produced."""
        if self.status in _DONE:
            return []
        events = self.context.state.events
        first = len(events)
        cursor = self._cursor
        if cursor in self._stop_before and self._would_start(self._steps[cursor]):
            self._stop_before -= {cursor}  # taken once (the wind-down comes to it next)
            self.cancel()  # where a replayed run was stopped between two tasks
        self.status = RunStatus.RUNNING
        if self.context.cancelled.is_set() and not self._stopping:
            self._user_stopped = self._stopping = True  # stopped between two steps
        if self._stopping:
            self._wind_down(run_cleanup=True)
        elif self._cursor < self._total:
            step = self._steps[self._cursor]
            self._cursor += 1
            final = self._execute(step)
            if final is None:  # with workers: stopped before its job began, as between steps
                self._cursor -= 1
                self._user_stopped = self._stopping = True
                self._wind_down(run_cleanup=True)
            else:
                self._retire(step, first)
                if final is Status.CANCELLED:
                    self._user_stopped = self._stopping = True
                elif final in FAILURE_STATUSES and self.orchestrator.on_failure is OnFailure.STOP:
                    # A user's stop during this very step (a run held at the failed attempt)
                    # is the same stop, not a second one: cleanups still run.
                    if not self.context.cancelled.is_set():
                        self._stops += 1
                    self._stopping = True
                if self._stopping:
                    self._wind_down(run_cleanup=False)
        if self._cursor >= self._total and self.status not in _DONE:
            self._finish()
        return events[first:]

    def set_workers(self, workers: int) -> None:
        """Run the remaining tasks with ``workers`` threads (from the next step on; a resumed
        run may use another count than it started with: the trace is the same)."""
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers

    def close(self) -> None:
        """Let go of the worker threads of a run left unfinished (tasks started ahead are
        cancelled and never recorded), and stop keeping requests of threads outside its
        attempts. A finished run has let go already."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        alarm.lapse()  # no stray alarm after the run
        if self.context.calls is not None:
            self.context.calls.finish()

    def run_to_end(self) -> Run:
        """Execute every remaining task."""
        Driver(self).continue_()
        return self

    # -- results ----------------------------------------------------------------------------

    @property
    def results(self) -> dict[str, Any]:
        """Committed outputs by task name, in plan order (fresh copies)."""
        return {name: commit.value() for name, commit in self.context.state.commits.items()}

    def _results_as_returned(self) -> dict[str, Any]:
        """:attr:`results`, each output's keys in the order its task returned them when the
        run kept that order (the article's ``run()``); canonical encodings stay sorted."""
        returned = self.context.returned
        if not returned:
            return self.results
        commits = self.context.state.commits
        return {name: loads(returned.get(name) or commit.text) for name, commit in commits.items()}

    def canonical_trace(self) -> list[dict[str, Any]]:
        """The canonical trace as JSON objects."""
        return self.context.state.canonical_trace()

    def digests(self, trace: str | None = None) -> dict[str, str]:
        """Digests of payload, plan, trace, results, and the run digest over all four.
        ``trace``: the trace digest, where the caller knows it is this trace's (a replay
        whose canonical trace is its record's, whose digest was checked)."""
        state = self.context.state
        parts = {
            "payload": self.context.payload_digest,
            "plan": self.plan.digest,
            "trace": trace if trace is not None else state.trace_digest(),
            "results": state.results_digest(),
        }
        return {**parts, "run": combine_digests(parts)}

    @property
    def digest(self) -> str:
        """The run digest: a pure function of workflow, payload and task outputs (I3)."""
        return self.digests()["run"]

    def outcome(self) -> dict[str, Any]:
        """``{"payload", "results", "trace"}`` of a run that succeeded (the article's result).

        Raises:
            TaskFailedError: the run did not succeed; names the first task that failed.
        """
        result = {"payload": self.payload, "results": self._results_as_returned(),
                  "trace": self.canonical_trace()}  # fmt: skip
        if self.status is RunStatus.SUCCEEDED:
            return result
        if self.status is not RunStatus.FAILED:  # stopped by the user, or never finished
            raise TaskFailedError.stopped(self.status.value, result)
        failed = next(e for e in self.final_events() if e.status in RUN_FAILING_STATUSES)
        error = failed.error or {"type": str(failed.status), "message": ""}
        cause = self.context.exceptions.get(failed.task)
        raise TaskFailedError(failed.task, failed.attempt, dict(error), result) from cause

    # -- internals --------------------------------------------------------------------------

    def _execute(self, step: PlanStep, start: bool = False) -> Status | None:
        """Take ``step`` to its final status: here, or through the worker pool. None: the
        user stopped the run before the step's job began (with ``start``, it begins anyway)."""
        workers = self.workers
        pool = self._pool
        if pool is not None and pool.workers != workers:  # changed between steps
            self.close()
            pool = None
        if workers == 1:
            return self._runner.execute(step)
        if pool is None:
            pool = self._pool = ParallelPool(self.context, self._steps, step.index, workers)
        pool.hold(self._breakpoints, step.index)
        return pool.retire(step, start)

    def _retire(self, step: PlanStep, first: int) -> None:
        if not self._retire_listeners:
            return
        state = self.context.state
        commit = state.commits.get(step.task)
        if commit is not None and commit.seq < first:
            commit = None
        events = tuple(state.events[first:])
        canonical = tuple([event.canonical_text() for event in events])
        state.hash_texts(first, canonical)
        retired = RetiredStep(
            step,
            events,
            None if commit is None else commit.text,
            None if commit is None else commit.digest,
            self._step_logs(events),
            canonical,
            self._step_calls(events),
        )
        for listener in self._retire_listeners:
            listener(retired)

    def _step_logs(self, events: tuple[TraceEvent, ...]) -> tuple[tuple[int, AttemptLog], ...]:
        """The non-empty logs of the attempts that ended among ``events``."""
        logs = self.context.logs
        if not logs:
            return ()
        found = []
        for event in events:
            if event.attempt and event.status is not Status.RUNNING:
                buffer = logs.get((event.task, event.attempt))
                if buffer is not None and (len(buffer) or buffer.truncated):
                    found.append((event.attempt, buffer.snapshot()))
        return tuple(found)

    def _step_calls(
        self, events: tuple[TraceEvent, ...]
    ) -> tuple[tuple[int, tuple[Exchange, ...]], ...]:
        """The recorded calls of the attempts that ended among ``events``."""
        calls = self.context.calls
        if calls is None or not calls.record:
            return ()
        found = []
        for event in events:
            if event.attempt and event.status is not Status.RUNNING:
                exchanges = calls.exchanges(event.task, event.attempt)
                if exchanges:
                    found.append((event.attempt, exchanges))
        return tuple(found)

    def _wind_down(self, run_cleanup: bool) -> None:
        """After a stop: cancel every task not yet started up to the next ``all_done``
        cleanup, and run that cleanup (when ``run_cleanup``; else at the next step). Its
        dependencies are final by then: they come before it in the plan."""
        context = self.context
        nodes = self.graph.nodes
        cleanups = self.orchestrator.cleanups_on_stop and self._stops < 2
        if self._pool is not None:  # work started ahead is dropped; cleanups may go on
            self._pool.abandon(lambda s: cleanups and nodes[s.task].trigger is Trigger.ALL_DONE)
        while self._cursor < self._total:
            step = self._steps[self._cursor]
            first = len(context.state.events)
            if cleanups and nodes[step.task].trigger is Trigger.ALL_DONE:
                if not run_cleanup:
                    return
                if self._cursor in self._stop_before:  # a replay: stopped again before it
                    self._stop_before -= {self._cursor}
                    self.cancel()
                    cleanups = self.orchestrator.cleanups_on_stop and self._stops < 2
                    continue
                self._cursor += 1
                context.cancelled.clear()  # the stop was for the work, not the cleanup
                final = self._execute(step, start=True)
                if final is None:  # stopped again before its job began
                    context.emit(step, Status.CANCELLED, 0)
                if final is None or final is Status.CANCELLED:
                    self._stops = max(self._stops, 2)  # stopped again: no more cleanups
                self._retire(step, first)
                return
            self._cursor += 1
            context.emit(step, Status.CANCELLED, 0)
            self._retire(step, first)
        self._finish()

    def _finish(self) -> None:
        self.close()
        if self._total in self._stop_before:  # a replay of a run stopped as it ended
            self._user_stopped = True
        if self._user_stopped:
            self.status = RunStatus.CANCELLED
            return
        state = self.context.state
        failed = any(state.status(name) in RUN_FAILING_STATUSES for name in self.plan.names)
        self.status = RunStatus.FAILED if failed else RunStatus.SUCCEEDED

    def _resume_from(
        self, events: Sequence[TraceEvent], outputs: Mapping[str, str], trace_hash: Any = None
    ) -> None:
        """Load recorded events (see :meth:`TaskOrchestrator.resume`)."""
        restored = restore(self.context, events, outputs, trace_hash)
        self._cursor = restored.cursor
        if restored.failed and self.orchestrator.on_failure is OnFailure.STOP:
            self._stopping = True
            self._stops = 1
        if restored.cancelled:  # the user had stopped it: it stays stopped
            self._user_stopped = self._stopping = True
            self._stops = max(self._stops, 1)
        if restored.cursor:
            self.status = RunStatus.RUNNING
        if restored.cursor >= self._total:
            self._finish()
