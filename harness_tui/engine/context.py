"""What every step of one run shares: graph, plan, state, clock, executor, payload, the cancel
flag and event emission. The step runner and the task inputs work on this, never on a run."""

from __future__ import annotations

import threading
from collections.abc import Callable, MutableMapping

from . import offline_guard
from .attempt import Attempt, Executor
from .canonical import check_json, digest_text, loads
from .capture import DEFAULT_LOG_LIMIT, LogBuffer, LogListener
from .clock import Clock
from .events import Status, TraceEvent
from .graph import TaskGraph, TaskNode
from .recorded_calls import AttemptIO, CallSession
from .scheduler import Plan, PlanStep
from .state import Outcomes, RunState

__all__ = ["Listener", "RunContext"]

Listener = Callable[[TraceEvent], None]

_new_event = tuple.__new__


class RunContext:
    """The shared state of one run.

    Attributes:
        graph: the validated task graph.
        plan: the run's plan.
        state: the append-only log of events and committed outputs.
        outcomes: what a task reads of the tasks before it (the state itself, except for a
            task run ahead in a parallel run: see :mod:`.parallel`).
        clock: where time comes from (I5).
        executor: where attempts run.
        attempt: the attempt in flight on this context's thread (a stop cancels it).
        detach: run attempts in a helper thread that a stop can leave.
        payload_text: the payload's canonical JSON.
        payload_digest: sha256 of :attr:`payload_text`.
        cancelled: set when the user stops the run (any thread may set it).
        listeners: called with every event as it is recorded; one that raises is removed
            and its exception kept in :attr:`listener_errors` (the run goes on, whole).
        listener_errors: exceptions raised by listeners, in order.
        log_limit: characters of output kept per attempt, or None to capture nothing.
        logs: each attempt's captured output by ``(task, attempt)``; beside the state, never
            in it, so no digest can depend on what a task printed (I3).
        unattributed: output of threads that outlived the attempt that started them.
        log_listeners: called with every piece of captured text as it is written.
        calls: what the outside world answered each attempt (HTTP and recorded calls), and
            how to answer it again; None when the run neither records nor replays calls.
            Beside the state like the logs: no digest depends on it (I3).
    """

    __slots__ = (
        "_now", "_params_texts", "_wall", "attempt", "calls", "cancelled", "clock", "detach",
        "exceptions", "executor", "graph", "listener_errors", "listeners", "log_limit",
        "log_listeners", "logs", "outcomes", "payload_digest", "payload_text", "plan",
        "returned", "state", "unattributed", "worker",
    )  # fmt: skip

    def __init__(
        self,
        graph: TaskGraph,
        plan: Plan,
        clock: Clock,
        executor: Executor,
        listeners: list[Listener],
        params_texts: MutableMapping[str, str],
        log_limit: int | None = DEFAULT_LOG_LIMIT,
        calls: CallSession | None = None,
    ) -> None:
        self.graph = graph
        self.plan = plan
        self.clock = clock
        self.executor = executor
        self.listeners = listeners
        self.state = RunState()
        self.outcomes: Outcomes = self.state
        # Each task's last exception raised in this process: beside the trace, never in it.
        self.exceptions: dict[str, BaseException] = {}
        # The article's run() prints outputs with the keys in the order tasks returned them:
        # their JSON in that order, kept only when asked (None), never in a digest.
        self.returned: dict[str, str] | None = None
        self.payload_text = plan.payload_text
        self.payload_digest = digest_text(check_json(loads(plan.payload_text)))
        self.cancelled = threading.Event()
        self.listener_errors: list[Exception] = []
        # Canonical params per task, shared by the runs of one orchestrator (the graph is
        # immutable, so each task's params are encoded once).
        self._params_texts = params_texts
        self._now = clock.now
        self._wall = clock.wall
        self.log_limit = log_limit
        self.log_listeners: list[LogListener] = []
        self.logs: dict[tuple[str, int], LogBuffer] = {}
        self.calls = calls
        self.worker = 0  # the run's own thread (a parallel run's jobs say theirs)
        self.attempt: Attempt | None = None  # the attempt in flight, for a stop to reach
        self.detach = False  # attempts run where a stop can leave them
        self.unattributed = LogBuffer(
            "", 0, log_limit or DEFAULT_LOG_LIMIT, None, self.log_listeners
        )

    def new_log(self, task: str, attempt: int) -> LogBuffer | None:
        """A fresh buffer for an attempt's output (None when capture is off)."""
        if self.log_limit is None:
            return None
        buffer = LogBuffer(task, attempt, self.log_limit, self.unattributed, self.log_listeners)
        self.logs[(task, attempt)] = buffer
        return buffer

    def end_log(self, buffer: LogBuffer) -> None:
        """The attempt ended: close its buffer, and forget it when it stayed empty (a run of
        100,000 quiet tasks then keeps no buffer at all). A job dropped by a stop may end
        after the task began again in a new job: that job's buffer stays."""
        buffer.close()
        if not len(buffer) and not buffer.truncated:
            key = (buffer.task, buffer.attempt)
            if self.logs.get(key) is buffer:  # not the buffer of the task's next job
                del self.logs[key]

    def new_io(self, task: str, attempt: int) -> AttemptIO | None:
        """The recorder of an attempt's calls (None when the run records nothing)."""
        calls = self.calls
        if calls is None:
            return None
        io = calls.open(task, attempt)
        if io.guarded:
            offline_guard.install()
        return io

    def params_text(self, node: TaskNode) -> str:
        """The canonical JSON of a task's static parameters."""
        text = self._params_texts.get(node.name)
        if text is None:
            params = node.params
            text = "{}" if not params else check_json(dict(params), f"$.tasks.{node.name}.params")
            self._params_texts[node.name] = text
        return text

    def emit(
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
        """Record the next trace event and tell the listeners."""
        event = self.new_event(
            len(self.state.events), step, status, attempt, started_at, error, input_digest,
            output_digest, traceback,
        )  # fmt: skip
        self.record(event)
        return event

    def new_event(
        self,
        seq: int,
        step: PlanStep,
        status: Status,
        attempt: int,
        started_at: float | None,
        error: dict[str, str] | None,
        input_digest: str | None,
        output_digest: str | None,
        traceback: str | None,
    ) -> TraceEvent:
        """An event at ``seq``, timed now (not recorded: see :meth:`record`)."""
        now = self._now()
        return _new_event(
            TraceEvent,
            (
                seq,
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
                self._wall(),
                self.worker,
            ),
        )

    def record(self, event: TraceEvent) -> None:
        """Append ``event`` (numbered ``len(state)``) to the trace and tell the listeners."""
        self.state.append_next(event)
        broken = None
        for listener in self.listeners:
            try:
                listener(event)
            except Exception as exc:  # a broken listener must not leave a task half-recorded
                self.listener_errors.append(exc)
                broken = [*(broken or ()), listener]
        if broken:
            for listener in broken:
                self.listeners.remove(listener)

    def commit(self, task: str, text: str, digest: str) -> None:
        """Commit a task's output, by the event about to be recorded."""
        self.state.commit(task, len(self.state.events), text, digest)
