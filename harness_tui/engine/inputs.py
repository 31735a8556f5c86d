"""What a task sees: its inputs mapping and the read-only view of its ancestors' results (I4)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .canonical import loads
from .clock import Clock
from .graph import TaskGraph, TaskNode
from .recorded_calls import io
from .scheduler import PlanStep
from .state import Outcomes

if TYPE_CHECKING:
    from .context import RunContext

__all__ = ["ResultsView", "TaskInputs"]


class ResultsView(Mapping[str, Any]):
    """``inputs["context"]["results"]``: the outputs of a task's ancestors, read-only (I4).

    Each value is decoded fresh from the committed canonical JSON the first time this view is
    asked for it, so a task that mutates what it read changes only its own copy.
    """

    __slots__ = ("_ancestors", "_cache", "_graph", "_outcomes", "_task")

    def __init__(self, graph: TaskGraph, outcomes: Outcomes, task: str) -> None:
        self._graph = graph
        self._outcomes = outcomes
        self._task = task
        self._cache: dict[str, Any] = {}
        self._ancestors: set[str] | None = None

    def _is_ancestor(self, name: str) -> bool:
        if name in self._graph[self._task].depends_on:
            return True
        if self._ancestors is None:
            self._ancestors = self._graph.ancestors(self._task)
        return name in self._ancestors

    def __getitem__(self, name: str) -> Any:
        if name in self._cache:
            return self._cache[name]
        commit = self._outcomes.output(name)
        if commit is None or not self._is_ancestor(name):
            raise KeyError(name)
        value = self._cache[name] = commit.value()
        return value

    def _names(self) -> list[str]:
        if self._ancestors is None:
            self._ancestors = self._graph.ancestors(self._task)
        # Plan order: iteration is deterministic.
        return [n for n in self._outcomes.output_names() if n in self._ancestors]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return (
            isinstance(name, str)
            and self._outcomes.output(name) is not None
            and self._is_ancestor(name)
        )


class TaskInputs(Mapping[str, Any]):
    """The one mapping a task function receives (see the task contract in docs/workflows.md).

    Keys: ``payload`` (a fresh copy), ``context`` (``{"results": ResultsView}``), ``params``
    (a fresh copy of the task's static parameters), ``task`` (name, task_id, attempt,
    depends_on) and ``io`` (recorded calls: ``inputs["io"].call(name, fn, *args)``).
    Values are built on first access, so a task that reads nothing costs nothing. The
    attributes :attr:`clock` and :attr:`cancelled` let built-ins sleep through the injected clock
    and notice cancellation.
    """

    __slots__ = ("_attempt", "_context", "_node", "_step", "_values")

    _KEYS = ("payload", "context", "params", "task", "io")

    def __init__(self, context: RunContext, node: TaskNode, step: PlanStep, attempt: int) -> None:
        self._context = context
        self._node = node
        self._step = step
        self._attempt = attempt
        self._values: dict[str, Any] = {}

    @property
    def clock(self) -> Clock:
        """The run's clock (built-ins sleep through it)."""
        return self._context.clock

    @property
    def cancelled(self) -> threading.Event:
        """Set when the user stops the run; long built-ins may poll it."""
        return self._context.cancelled

    @property
    def task(self) -> dict[str, Any]:
        """``{"name", "task_id", "attempt", "depends_on"}`` (a fresh dict)."""
        node = self._node
        return {
            "name": node.name,
            "task_id": self._step.task_id,
            "attempt": self._attempt,
            "depends_on": list(node.depends_on),
        }

    def __getitem__(self, key: str) -> Any:
        values = self._values
        if key in values:
            return values[key]
        context = self._context
        if key == "payload":
            value: Any = loads(context.payload_text)
        elif key == "context":
            value = {"results": ResultsView(context.graph, context.outcomes, self._node.name)}
        elif key == "params":
            value = loads(context.params_text(self._node))
        elif key == "task":
            value = self.task
        elif key == "io":
            return io
        else:
            raise KeyError(key)
        values[key] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._KEYS)

    def __len__(self) -> int:
        return 5
