"""The ``Harness`` facade: the seed article's API over our engine."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .attempt import Executor
from .clock import Clock
from .graph import Predicate, TaskFn, TaskGraph, TaskNode, Trigger
from .orchestrator import TaskOrchestrator
from .recorded_calls import CallMode, CallSession, Exchange
from .scheduler import DeterministicScheduler

__all__ = ["Harness"]


class Harness:
    """Register tasks, then run them deterministically.

    Example (the article's form, then the keyword form):
        >>> h = Harness()
        >>> h.register(TaskNode("hello", lambda inputs: {"hi": inputs["payload"]["who"]}))
        >>> h.register("bye", lambda inputs: "bye", depends_on=["hello"])
        >>> h.run({"who": "you"})["results"]["hello"]
        {'hi': 'you'}

    Args:
        executor: where attempts run (default: in process, in the thread that runs the task).
        clock: where time comes from (default: the system clock).
        workers: tasks run at once, in threads; the trace is the serial one whatever the
            count.
        record: ``True`` records what HTTP services and ``io.call`` answer each run's
            attempts (a fresh session per run; read it in :attr:`recordings`), as
            ``run --record`` does; a :class:`CallSession` is used as it is, for instance to
            answer every request from an earlier recording
            (``CallSession(CallMode.OFFLINE, recordings)``, docs/recording.md).
    """

    def __init__(
        self,
        executor: Executor | None = None,
        clock: Clock | None = None,
        workers: int = 1,
        *,
        record: bool | CallSession = False,
    ) -> None:
        self.graph = TaskGraph()
        # Built once, as in the article: both see the tasks registered later (same graph).
        self.scheduler = DeterministicScheduler(self.graph)
        self.orchestrator = TaskOrchestrator(
            self.graph, self.scheduler, executor=executor, clock=clock, workers=workers
        )
        self.record = record
        self.calls: CallSession | None = None
        """The session of the last run (None when it recorded nothing)."""

    def register(
        self,
        task: TaskNode | str,
        fn: TaskFn | None = None,
        depends_on: Iterable[str] | None = None,
        max_retries: int = 0,
        timeout_seconds: float | None = 30.0,
        *,
        retry_interval: float = 0.0,
        fallback: TaskFn | None = None,
        when: Predicate | None = None,
        trigger: Trigger | str = Trigger.ALL_SUCCEEDED,
        params: Mapping[str, Any] | None = None,
        description: str = "",
    ) -> None:
        """Add a task: a :class:`TaskNode` (the article's call), or a name with the node's
        fields as arguments. Its dependencies must already be registered (as in the article).

        Raises:
            GraphError: the name is taken or invalid, or a dependency is unknown (a
                ``ValueError``).
            TypeError: a :class:`TaskNode` was given together with node fields.
        """
        if isinstance(task, TaskNode):
            if fn is not None or depends_on is not None:
                raise TypeError("register(TaskNode) takes no other task fields")
            self.graph.add_task(task)
            return
        self.graph.add_task(
            TaskNode(
                name=task,
                fn=fn,
                depends_on=tuple(depends_on or ()),
                max_retries=max_retries,
                timeout_seconds=timeout_seconds,
                retry_interval=retry_interval,
                fallback=fallback,
                when=when,
                trigger=Trigger(trigger),
                params=dict(params or {}),
                description=description,
            )
        )

    @property
    def workers(self) -> int:
        """Tasks run at once by :attr:`orchestrator`."""
        return self.orchestrator.workers

    @workers.setter
    def workers(self, count: int) -> None:
        if count < 1:
            raise ValueError(f"workers must be at least 1, not {count}")
        self.orchestrator.workers = count

    def run(self, payload: Any) -> dict[str, Any]:
        """Run every task and return ``{"payload", "results", "trace"}``.

        Raises:
            TaskFailedError: a task still failed after its retries and had no fallback (a
                ``RuntimeError``).
        """
        calls = self.record if isinstance(self.record, CallSession) else None
        if self.record is True:
            calls = CallSession(CallMode.LIVE)
        if calls is not None:
            self.intercept_http()
        self.calls = calls
        return self.orchestrator.run(payload, calls=calls)

    def intercept_http(self) -> None:
        """Route the HTTP its attempts make to their recorders. The engine patches no HTTP
        client (that code lives above it, in ``harness_tui.interception``): here only
        ``io.call`` is recorded; ``harness_tui.Harness``, the public class, installs the
        interception."""

    @property
    def recordings(self) -> dict[tuple[str, int], list[Exchange]]:
        """What the last run's attempts were answered, by ``(task, attempt)`` (threads outside
        any attempt under ``("", 0)``); empty when it recorded nothing."""
        return {} if self.calls is None else self.calls.recordings()
