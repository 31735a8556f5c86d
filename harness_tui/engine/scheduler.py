"""The deterministic scheduler: one workflow plus one payload give exactly one plan.

Kahn's algorithm over a heap keyed by ``(task_id, name)`` (I2): among the tasks whose
dependencies are all planned, the smallest key goes next. Task ids are computed once per plan
from the payload serialized once (I1), so planning is O((V + E) log V).
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple, Protocol

from .canonical import payload_text, plan_text
from .errors import HarnessError
from .graph import CycleError, GraphProblem, TaskGraph, Topology

__all__ = [
    "DeterministicScheduler",
    "Plan",
    "PlanStep",
    "Scheduler",
    "SchedulerError",
    "plan_with",
]


class SchedulerError(HarnessError, ValueError):
    """A scheduler's ``build_plan`` gave no topological order of the graph."""


class Scheduler(Protocol):
    """What an orchestrator plans with: the article's contract, one method.

    ``build_plan(payload)`` returns every task name of the graph once, each after its
    dependencies. :class:`DeterministicScheduler` is one; a subclass or any object with this
    method is another, and its order is run (see :func:`plan_with`).
    """

    def build_plan(self, payload: Any) -> Sequence[str]: ...


class PlanStep(NamedTuple):
    """One task's place in a plan.

    Attributes:
        index: 0-based position in the plan.
        task: the task name.
        task_id: the stable task id (I1).
        level: longest path from a root task (roots are level 0).
    """

    index: int  # type: ignore[assignment]  # the field shadows tuple.index, by design
    task: str
    task_id: str
    level: int


class Plan:
    """An immutable execution plan: task names, ids and levels in order, and a digest.

    The plan is stored as three columns; :attr:`steps` materializes :class:`PlanStep` tuples on
    first use (at 100k tasks, creating the objects would cost as much as planning itself).
    ``scheduler`` is None for the deterministic order, else the class of the custom scheduler
    that chose this order (``module.Qualname``: see :func:`plan_with`).
    """

    __slots__ = ("__dict__", "levels", "names", "payload_text", "scheduler", "task_ids")

    def __init__(
        self,
        names: tuple[str, ...],
        task_ids: tuple[str, ...],
        levels: tuple[int, ...],
        payload_text: str,
        scheduler: str | None = None,
    ) -> None:
        self.names = names
        self.task_ids = task_ids
        self.levels = levels
        self.payload_text = payload_text
        self.scheduler = scheduler

    @cached_property
    def steps(self) -> tuple[PlanStep, ...]:
        """The plan steps, in order."""
        make = tuple.__new__
        return tuple(
            map(
                make,
                repeat(PlanStep),
                zip(range(len(self.names)), self.names, self.task_ids, self.levels, strict=True),
            )
        )

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[PlanStep]:
        return iter(self.steps)

    def __getitem__(self, index: int) -> PlanStep:
        return self.steps[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Plan):
            return NotImplemented
        return (
            self.names == other.names
            and self.task_ids == other.task_ids
            and self.levels == other.levels
            and self.payload_text == other.payload_text
        )

    def __hash__(self) -> int:
        return hash(self.task_ids)

    def __repr__(self) -> str:
        return f"Plan({len(self.names)} steps, digest={self.digest[:12]})"

    @cached_property
    def index_of(self) -> Mapping[str, int]:
        """Plan position by task name."""
        return {name: index for index, name in enumerate(self.names)}

    def to_json(self) -> list[dict[str, Any]]:
        """The plan as canonical JSON objects ``{"index", "task", "task_id", "level"}``."""
        return [step._asdict() for step in self.steps]

    @cached_property
    def digest(self) -> str:
        """sha256 of the canonical JSON of :meth:`to_json`."""
        text = plan_text(self.names, self.task_ids, self.levels)
        return hashlib.sha256(text.encode()).hexdigest()


def _kahn(
    keys: list[int], roots: list[int], indegree: list[int], dependents: list[list[int]]
) -> tuple[list[int], list[int]]:
    """Kahn's algorithm, smallest key first: the task numbers in plan order and each task's
    level. ``indegree`` is consumed (what is left non-zero is stuck on a cycle)."""
    n = len(keys)
    level = [0] * n
    # The ready set is a heap plus a sorted run: a task that releases many others at once
    # (a fan-out) sorts them in one C call instead of pushing each through the heap. A run
    # is only rebuilt for a batch at least a quarter of its size, so merging stays linear.
    heap: list[int] = []
    run = sorted([keys[i] for i in roots])
    at = 0
    push, pop = heapq.heappush, heapq.heappop
    order: list[int] = []
    append = order.append
    while True:
        if heap and (at == len(run) or heap[0] < run[at]):
            i = pop(heap) % n
        elif at < len(run):
            i = run[at] % n
            at += 1
        else:
            break
        append(i)
        deeper = level[i] + 1
        released: list[int] | None = None
        for child in dependents[i]:
            if level[child] < deeper:
                level[child] = deeper
            remaining = indegree[child] - 1
            indegree[child] = remaining
            if not remaining:
                if released is None:
                    released = [child]
                else:
                    released.append(child)
        if released is not None:
            if len(released) > 16 and len(released) * 4 >= len(run) - at:
                run = sorted([keys[c] for c in released] + run[at:])
                at = 0
            else:
                for child in released:
                    push(heap, keys[child])
    return order, level


class DeterministicScheduler:
    """Turns a :class:`TaskGraph` and a payload into its one :class:`Plan`.

    Args:
        graph: a validated graph.
    """

    def __init__(self, graph: TaskGraph) -> None:
        self.graph = graph

    def build_plan(self, payload: Any) -> list[str]:
        """Task names in execution order (the article's API).

        Raises:
            CycleError: the graph has a cycle (a ``RuntimeError``, as the article promises).
        """
        return list(self.plan(payload).names)

    def plan(self, payload: Any) -> Plan:
        """The execution plan for ``payload``: the plan made last over this version of the
        graph when it was for the same payload (a plan is a function of the two, and
        immutable: two stored runs of one workflow diffed, or a run and its record, plan
        100,000 tasks once, not twice).

        Raises:
            CanonicalError: the payload is not a JSON value.
            CycleError: the graph has a cycle (a GraphError and a RuntimeError).
        """
        text = payload_text(payload)
        topology = self.graph.topology()
        last = topology.last_plan
        if last is not None and last.payload_text == text:
            return last  # type: ignore[no-any-return]
        topology.last_plan = plan = self._plan(topology, text)
        return plan

    def _plan(self, topology: Topology, text: str) -> Plan:
        names = topology.names
        n = len(names)
        suffix = (":" + text).encode()
        sha256 = hashlib.sha256
        ids = [sha256(name + suffix).hexdigest()[:16] for name in topology.encoded]
        # Tasks are numbered in name order and ids have a fixed width, so the integer
        # ``id * n + number`` orders exactly like ``(task_id, name)`` and compares in C.
        keys = [int(task_id, 16) * n + i for i, task_id in enumerate(ids)]
        indegree = topology.indegree.copy()
        order, level = _kahn(keys, topology.roots, indegree, topology.dependents)
        if len(order) != n:
            stuck = sorted(names[i] for i, count in enumerate(indegree) if count)
            raise CycleError(
                [GraphProblem("cycle", tuple(stuck), "cycle among: " + ", ".join(stuck))]
            )
        if n == 0:
            return Plan((), (), (), text)
        if n == 1:
            return Plan((names[0],), (ids[0],), (0,), text)
        pick = itemgetter(*order)
        return Plan(pick(names), pick(ids), pick(level), text)


def plan_with(scheduler: Scheduler, graph: TaskGraph, payload: Any) -> Plan:
    """The plan ``scheduler`` gives for ``payload`` over ``graph``.

    A :class:`DeterministicScheduler` that keeps the article's ``build_plan`` plans directly.
    Any other scheduler (a subclass overriding ``build_plan``, or an object that only has
    it) is asked for its order, which must be a topological order of ``graph``; an order
    other than the deterministic one is marked with the scheduler's class
    (:attr:`Plan.scheduler`), so an export says where its plan came from.

    Raises:
        SchedulerError: the order misses a task, repeats one, names an unknown one, or puts a
            task before one of its dependencies.
        CycleError: the graph has a cycle.
    """
    if type(scheduler).build_plan is DeterministicScheduler.build_plan:
        return scheduler.plan(payload)  # type: ignore[attr-defined, no-any-return]
    names = scheduler.build_plan(payload)
    ours = DeterministicScheduler(graph).plan(payload)
    kind = type(scheduler)
    where = f"{kind.__module__}.{kind.__qualname__}"
    order = check_order(graph, names, where)
    if order == ours.names:
        return ours
    position = dict(zip(ours.names, range(len(ours)), strict=True))
    level: dict[str, int] = {}
    for name in order:
        level[name] = max((level[dep] + 1 for dep in graph.nodes[name].depends_on), default=0)
    return Plan(
        order,
        tuple(ours.task_ids[position[name]] for name in order),
        tuple(level[name] for name in order),
        ours.payload_text,
        where,
    )


def check_order(graph: TaskGraph, names: Any, where: str) -> tuple[str, ...]:
    """``names`` as a tuple when it is a topological order of ``graph``.

    Raises:
        SchedulerError: one line saying the first way it is not.
    """
    said = f"{where}.build_plan"
    if isinstance(names, str | bytes) or not isinstance(names, Sequence):
        raise SchedulerError(f"{said} returned {type(names).__name__}, not a list of task names")
    done: set[str] = set()
    for name in names:
        if not isinstance(name, str) or name not in graph.nodes:
            raise SchedulerError(f"{said} returned {name!r}, which is no task of the graph")
        if name in done:
            raise SchedulerError(f"{said} returned {name!r} twice")
        for dep in graph.nodes[name].depends_on:
            if dep not in done:
                raise SchedulerError(
                    f"{said} puts {name!r} before its dependency {dep!r}: "
                    "a plan must be a topological order of the graph"
                )
        done.add(name)
    if len(done) != len(graph.nodes):
        missing = [name for name in graph.nodes if name not in done]
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise SchedulerError(f"{said} left out {', '.join(map(repr, missing[:5]))}{more}")
    return tuple(names)
