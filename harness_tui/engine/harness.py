"""The ``Harness`` facade: the seed article's API over our engine."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .clock import Clock
from .events import FAILURE_STATUSES, RunStatus
from .executors import Executor
from .graph import Predicate, TaskFn, TaskGraph, TaskNode, Trigger
from .orchestrator import TaskOrchestrator
from .scheduler import DeterministicScheduler

__all__ = ["Harness"]


class Harness:
    """Register tasks, then run them deterministically.

    Example:
        >>> h = Harness()
        >>> h.register("hello", lambda inputs: {"hi": inputs["payload"]["who"]})
        >>> h.run({"who": "you"})["results"]["hello"]
        {'hi': 'you'}

    Args:
        executor: how attempts run (default: serial, in process).
        clock: where time comes from (default: the system clock).
    """

    def __init__(self, executor: Executor | None = None, clock: Clock | None = None) -> None:
        self.graph = TaskGraph()
        self._executor = executor
        self._clock = clock

    def register(
        self,
        name: str,
        fn: TaskFn,
        depends_on: Iterable[str] | None = None,
        max_retries: int = 0,
        timeout_seconds: float | None = None,
        *,
        retry_interval: float = 0.0,
        fallback: TaskFn | None = None,
        when: Predicate | None = None,
        trigger: Trigger | str = Trigger.ALL_SUCCEEDED,
        params: Mapping[str, Any] | None = None,
        description: str = "",
    ) -> TaskNode:
        """Add a task; its dependencies must already be registered (as in the article).

        Raises:
            GraphError: the name is taken or invalid, or a dependency is unknown.
        """
        node = TaskNode(
            name=name,
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
        self.graph.add_task(node)
        return node

    @property
    def scheduler(self) -> DeterministicScheduler:
        """A scheduler over the current graph."""
        return DeterministicScheduler(self.graph)

    @property
    def orchestrator(self) -> TaskOrchestrator:
        """An orchestrator over the current graph (stops at the first failure)."""
        return TaskOrchestrator(self.graph, executor=self._executor, clock=self._clock)

    def run(self, payload: Any) -> dict[str, Any]:
        """Run every task and return ``{"payload", "results", "trace"}``.

        Raises:
            RuntimeError: a task still failed after its retries (and had no fallback).
        """
        run = self.orchestrator.run(payload)
        if run.status is not RunStatus.SUCCEEDED:
            failed = next(e for e in reversed(run.events) if e.status in FAILURE_STATUSES)
            error = failed.error or {}
            raise RuntimeError(
                f"task {failed.task!r} failed after {failed.attempt} attempt(s): "
                f"{error.get('type', 'Error')}: {error.get('message', '')}"
            )
        return {"payload": run.payload, "results": run.results, "trace": run.canonical_trace()}
