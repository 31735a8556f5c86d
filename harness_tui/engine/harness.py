"""The ``Harness`` facade: the seed article's API over our engine."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .attempt import Executor
from .clock import Clock
from .graph import Predicate, TaskFn, TaskGraph, TaskNode, Trigger
from .orchestrator import TaskOrchestrator
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
    """

    def __init__(
        self, executor: Executor | None = None, clock: Clock | None = None, workers: int = 1
    ) -> None:
        self.graph = TaskGraph()
        self._executor = executor
        self._clock = clock
        self.workers = workers

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
    def scheduler(self) -> DeterministicScheduler:
        """A scheduler over the current graph."""
        return DeterministicScheduler(self.graph)

    @property
    def orchestrator(self) -> TaskOrchestrator:
        """An orchestrator over the current graph (stops at the first failure)."""
        return TaskOrchestrator(
            self.graph,
            self.scheduler,
            executor=self._executor,
            clock=self._clock,
            workers=self.workers,
        )

    def run(self, payload: Any) -> dict[str, Any]:
        """Run every task and return ``{"payload", "results", "trace"}``.

        Raises:
            TaskFailedError: a task still failed after its retries and had no fallback (a
                ``RuntimeError``).
        """
        return self.orchestrator.run(payload)
