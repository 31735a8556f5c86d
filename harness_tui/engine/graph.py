"""Task nodes and the task graph, validated as a whole.

A graph can be built in any declaration order (:meth:`TaskGraph.from_nodes`); validation
reports every problem at once (duplicates, unknown or self dependencies, invalid names and each
cycle as ``a -> b -> a``) so a user fixes a file in one pass instead of one error per run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .canonical import compute_task_id
from .errors import HarnessError
from .untrusted import quoted

__all__ = [
    "MAX_RETRY_INTERVAL_SECONDS",
    "MAX_TIMEOUT_SECONDS",
    "CycleError",
    "Expression",
    "GraphError",
    "GraphProblem",
    "OnFailure",
    "TaskGraph",
    "TaskNode",
    "Trigger",
]

TaskFn = Callable[[Mapping[str, Any]], Any]
Predicate = Callable[[Mapping[str, Any]], bool]

NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,127}")


class OnFailure(StrEnum):
    """What a run does once a task has finally failed."""

    STOP = "stop"
    """Cancel the remaining tasks; the run fails."""
    CONTINUE = "continue"
    """Independent branches go on; dependents become ``upstream_failed``."""


class Trigger(StrEnum):
    """When a task runs, given the final statuses of its dependencies."""

    ALL_SUCCEEDED = "all_succeeded"
    """Every dependency produced an output (the default)."""
    NONE_FAILED = "none_failed"
    """No dependency failed; skipped dependencies are fine."""
    ALL_DONE = "all_done"
    """Always, once the dependencies are done (cleanup tasks)."""


class Expression:
    """A ``when`` predicate written as text (a workflow file's JMESPath): specs, diffs and
    golden files show its :attr:`source`, so a condition reads the same whether a file or
    Python code declared it. Subclasses implement ``__call__``."""

    source: str = ""

    def __call__(self, scope: Mapping[str, Any]) -> bool:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class TaskNode:
    """One task of a workflow.

    Attributes:
        name: unique name within the graph.
        fn: the callable that runs the task (one mapping in, a JSON value out).
        depends_on: names of the tasks whose outputs this one needs.
        max_retries: retries after the first attempt (attempts = max_retries + 1).
        timeout_seconds: limit for one attempt, or None for no limit (the article's default,
            30 s; an attempt without a limit skips the timer altogether).
        retry_interval: fixed seconds to wait (through the clock) before each retry.
        fallback: produces the output when every attempt failed, or None.
        when: predicate over ``{"payload", "results"}``; false skips the task.
        trigger: the rule over dependency statuses (see :class:`Trigger`).
        params: the task's static parameters (``inputs["params"]``); a JSON object.
        description: free text for people.
        ref: how the task was declared (``module:function``); shown, diffed, never imported here.
        fallback_ref: likewise for the fallback.
        when_source: the source text of the condition, if it came from a file.
    """

    name: str
    fn: TaskFn | None = None
    depends_on: tuple[str, ...] = ()
    max_retries: int = 0
    timeout_seconds: float | None = 30.0
    retry_interval: float = 0.0
    fallback: TaskFn | None = None
    when: Predicate | None = None
    trigger: Trigger = Trigger.ALL_SUCCEEDED
    params: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    ref: str = ""
    fallback_ref: str = ""
    when_source: str = ""

    def __post_init__(self) -> None:
        # Accept lists from callers (the article passes lists) but keep the node immutable.
        if not isinstance(self.depends_on, tuple):
            object.__setattr__(self, "depends_on", tuple(self.depends_on))
        if not isinstance(self.trigger, Trigger):
            object.__setattr__(self, "trigger", Trigger(self.trigger))
        if not self.when_source and isinstance(self.when, Expression):
            object.__setattr__(self, "when_source", self.when.source)


@dataclass(frozen=True, slots=True)
class GraphProblem:
    """One thing wrong with a graph.

    Attributes:
        kind: ``duplicate``, ``unknown_dependency``, ``self_dependency``, ``cycle``,
            ``invalid_name`` or ``invalid_field``.
        tasks: the tasks involved (for a cycle, in cycle order).
        message: a sentence a person can act on.
    """

    kind: str
    tasks: tuple[str, ...]
    message: str


class GraphError(HarnessError, ValueError):
    """A graph is invalid; ``problems`` lists every problem found.

    A ``ValueError``, as the article's ``add_task`` promises for an unregistered dependency.
    """

    def __init__(self, problems: Sequence[GraphProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(p.message for p in self.problems))

    @classmethod
    def of(cls, problems: Sequence[GraphProblem]) -> GraphError:
        """The error for ``problems``: a :class:`CycleError` when one of them is a cycle."""
        if any(problem.kind == "cycle" for problem in problems):
            return CycleError(problems)
        return cls(problems)


class CycleError(GraphError, RuntimeError):
    """The graph has a cycle (``problems`` names its tasks). Also a ``RuntimeError``, as the
    article's ``build_plan`` promises."""


MAX_TIMEOUT_SECONDS = 7 * 24 * 3600
"""The longest limit one attempt may have (a week): finite, so a deadline is a number."""
MAX_RETRY_INTERVAL_SECONDS = 24 * 3600
"""The longest wait before a retry (a day)."""


def _field_problems(node: TaskNode) -> list[GraphProblem]:
    problems = []

    def bad(message: str) -> None:
        problems.append(
            GraphProblem("invalid_field", (node.name,), f"task {node.name!r}: {message}")
        )

    if (
        isinstance(node.max_retries, bool)
        or not isinstance(node.max_retries, int)
        or node.max_retries < 0
    ):
        bad(f"max_retries must be a non-negative integer, got {node.max_retries!r}")
    timeout = node.timeout_seconds
    if timeout is not None and not (
        isinstance(timeout, int | float) and 0 < timeout <= MAX_TIMEOUT_SECONDS
    ):
        bad(
            f"timeout_seconds must be a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT_SECONDS:,}, got {timeout!r}"
        )
    interval = node.retry_interval
    if not (isinstance(interval, int | float) and 0 <= interval <= MAX_RETRY_INTERVAL_SECONDS):
        bad(
            f"retry_interval must be a number of seconds from 0 to "
            f"{MAX_RETRY_INTERVAL_SECONDS:,}, got {interval!r}"
        )
    if type(node.params) is not dict and not isinstance(node.params, Mapping):
        bad(f"params must be a mapping, got {type(node.params).__name__}")
    return problems


def _dependency_problems(by_name: Mapping[str, TaskNode]) -> list[GraphProblem]:
    """Self, unknown and repeated dependencies, in declaration order."""
    problems = []
    for node in by_name.values():
        seen: set[str] = set()
        for dep in node.depends_on:
            if dep == node.name:
                problems.append(
                    GraphProblem(
                        "self_dependency", (node.name,), f"task {node.name!r} depends on itself"
                    )
                )
            elif dep not in by_name:
                problems.append(
                    GraphProblem(
                        "unknown_dependency",
                        (node.name, dep),
                        f"task {node.name!r} depends on unknown task {dep!r}",
                    )
                )
            elif dep in seen:
                problems.append(
                    GraphProblem(
                        "duplicate",
                        (node.name, dep),
                        f"task {node.name!r} lists dependency {dep!r} twice",
                    )
                )
            seen.add(dep)
    return problems


class TaskGraph:
    """A validated DAG of :class:`TaskNode` with its adjacency precomputed.

    Use :meth:`from_nodes` to build one from nodes in any order, or the article's incremental
    :meth:`add_task`, which requires dependencies to be registered first.
    """

    __slots__ = ("_dependents", "_nodes", "_topology")

    def __init__(self) -> None:
        self._nodes: dict[str, TaskNode] = {}
        self._dependents: dict[str, list[str]] = {}
        self._topology: Topology | None = None

    def topology(self) -> Topology:
        """Integer-indexed adjacency for planners, built once per graph version."""
        if self._topology is None:
            self._topology = Topology(self)
        return self._topology

    @classmethod
    def from_nodes(cls, nodes: Iterable[TaskNode]) -> TaskGraph:
        """Build and validate a graph from nodes declared in any order.

        Raises:
            GraphError: listing every problem (not just the first).
        """
        nodes = list(nodes)
        problems: list[GraphProblem] = []
        by_name: dict[str, TaskNode] = {}
        for node in nodes:
            if not isinstance(node.name, str) or not NAME_PATTERN.fullmatch(node.name):
                problems.append(
                    GraphProblem(
                        "invalid_name",
                        (str(node.name),),
                        f"invalid task name {quoted(node.name)}: use letters, digits, '_' or '-', "
                        "starting with a letter or '_' (at most 128 characters)",
                    )
                )
            if node.name in by_name:
                problems.append(
                    GraphProblem("duplicate", (node.name,), f"duplicate task name {node.name!r}")
                )
                continue
            by_name[node.name] = node
            problems.extend(_field_problems(node))
        problems.extend(_dependency_problems(by_name))
        graph = cls()
        graph._nodes = by_name
        graph._dependents = {name: [] for name in by_name}
        for node in by_name.values():
            for dep in dict.fromkeys(node.depends_on):
                if dep in by_name and dep != node.name:
                    graph._dependents[dep].append(node.name)
        for cycle in graph._cycles():
            problems.append(
                GraphProblem("cycle", tuple(cycle), "cycle: " + " -> ".join([*cycle, cycle[0]]))
            )
        if problems:
            raise GraphError.of(problems)
        return graph

    def add_task(self, node: TaskNode) -> None:
        """Add one task whose dependencies are already registered (the article's API).

        Raises:
            GraphError: if the name is taken or invalid, or a dependency is not registered.
        """
        problems = []
        if node.name in self._nodes:
            problems.append(
                GraphProblem("duplicate", (node.name,), f"duplicate task name {node.name!r}")
            )
        if not isinstance(node.name, str) or not NAME_PATTERN.fullmatch(node.name):
            problems.append(
                GraphProblem(
                    "invalid_name", (str(node.name),), f"invalid task name {quoted(node.name)}"
                )
            )
        for dep in node.depends_on:
            if dep not in self._nodes:
                problems.append(
                    GraphProblem(
                        "unknown_dependency",
                        (node.name, dep),
                        f"task {node.name!r} depends on {dep!r}, which is not registered yet",
                    )
                )
        if len(set(node.depends_on)) != len(node.depends_on):
            problems.append(
                GraphProblem(
                    "duplicate", (node.name,), f"task {node.name!r} lists a dependency twice"
                )
            )
        problems.extend(_field_problems(node))
        if problems:
            raise GraphError(problems)
        # A new node can only point at existing nodes, so it cannot close a cycle.
        self._topology = None
        self._nodes[node.name] = node
        self._dependents[node.name] = []
        for dep in dict.fromkeys(node.depends_on):
            self._dependents[dep].append(node.name)

    def __contains__(self, name: object) -> bool:
        return name in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, name: str) -> TaskNode:
        return self._nodes[name]

    @property
    def nodes(self) -> Mapping[str, TaskNode]:
        """Nodes by name, in declaration order."""
        return self._nodes

    @property
    def tasks(self) -> Mapping[str, TaskNode]:
        """Alias of :attr:`nodes` (the article's name)."""
        return self._nodes

    # -- the article's API ------------------------------------------------------------------

    def get_task(self, name: str) -> TaskNode:
        """The task called ``name``.

        Raises:
            KeyError: no such task.
        """
        return self._nodes[name]

    def all_tasks(self) -> list[TaskNode]:
        """Every task, in declaration order."""
        return list(self._nodes.values())

    def dependencies_of(self, name: str) -> list[str]:
        """The names of the tasks ``name`` depends on directly, as declared."""
        return list(self._nodes[name].depends_on)

    @staticmethod
    def compute_task_id(payload: Any, task_name: str) -> str:
        """The stable id of ``task_name`` for ``payload`` (I1): the first 16 hex digits of
        ``sha256(f"{task_name}:{json.dumps(payload, sort_keys=True, ensure_ascii=False)}")``.
        """
        return compute_task_id(payload, task_name)

    # -- ours -------------------------------------------------------------------------------

    def dependents(self, name: str) -> Sequence[str]:
        """Names of the tasks that depend directly on ``name``."""
        return self._dependents[name]

    def ancestors(self, name: str) -> set[str]:
        """Every task ``name`` depends on, directly or not."""
        return self._walk(name, lambda n: self._nodes[n].depends_on)

    def descendants(self, name: str) -> set[str]:
        """Every task that depends on ``name``, directly or not."""
        return self._walk(name, self._dependents.__getitem__)

    @staticmethod
    def _walk(start: str, nexts: Callable[[str], Iterable[str]]) -> set[str]:
        seen: set[str] = set()
        stack = list(nexts(start))
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(nexts(current))
        return seen

    def _acyclic(self) -> bool:
        """Whether Kahn's algorithm empties the graph: a few times cheaper than finding the
        components, which only a graph with a cycle needs."""
        waiting = dict.fromkeys(self._dependents, 0)
        for dependents in self._dependents.values():
            for name in dependents:
                waiting[name] += 1
        ready = [name for name, count in waiting.items() if not count]
        done = 0
        while ready:
            done += 1
            for name in self._dependents[ready.pop()]:
                waiting[name] -= 1
                if not waiting[name]:
                    ready.append(name)
        return done == len(waiting)

    def _cycles(self) -> list[list[str]]:
        """One cycle per strongly connected component with more than one task, each rotated
        to start at its smallest name so reports are stable."""
        if self._acyclic():
            return []
        deps = {
            n: [d for d in node.depends_on if d in self._nodes and d != n]
            for n, node in self._nodes.items()
        }
        return sorted(_cycle_in(component, deps) for component in _components(deps))


def _components(deps: Mapping[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of more than one task: iterative Tarjan (no recursion
    limit at 100k tasks)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(deps):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            children = deps[v]
            if i < len(children):
                work.append((v, i + 1))
                w = children[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    components.append(component)
    return components


def _cycle_in(component: list[str], deps: Mapping[str, list[str]]) -> list[str]:
    """An actual cycle inside a strongly connected component, smallest names first."""
    members = set(component)
    start = min(members)
    path = [start]
    position = {start: 0}
    current = start
    while True:
        nxt = min(d for d in deps[current] if d in members)
        if nxt in position:
            cycle = path[position[nxt] :]
            break
        position[nxt] = len(path)
        path.append(nxt)
        current = nxt
    # Reported along depends_on: "a -> b" reads "a depends on b", as in the file.
    pivot = cycle.index(min(cycle))
    return cycle[pivot:] + cycle[:pivot]


class Topology:
    """A graph as integer arrays, tasks numbered in name order.

    Attributes:
        names: task names, sorted.
        encoded: the names as UTF-8 bytes (hashed once per plan).
        index: position of each name.
        indegree: number of dependencies per task.
        dependents: for each task, the positions of the tasks that depend on it.
        roots: positions of the tasks without dependencies.
        last_plan: the plan made last over this graph version (see
            :meth:`~.scheduler.DeterministicScheduler.plan`), or None.
    """

    __slots__ = ("dependents", "encoded", "indegree", "index", "last_plan", "names", "roots")

    def __init__(self, graph: TaskGraph) -> None:
        self.names = sorted(graph.nodes)
        self.encoded = [name.encode() for name in self.names]
        self.index = {name: i for i, name in enumerate(self.names)}
        index = self.index
        self.indegree = [len(graph[name].depends_on) for name in self.names]
        self.dependents = [[index[d] for d in graph.dependents(name)] for name in self.names]
        self.roots = [i for i, count in enumerate(self.indegree) if count == 0]
        self.last_plan: Any = None
