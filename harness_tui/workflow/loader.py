"""Load a workflow file into engine objects, reporting every problem with ``file:line:col``.

Nothing here imports or runs user code (I6): ``run:`` and ``fallback:`` become
:class:`~harness_tui.workflow.refs.LazyCallable` objects, and ``when:`` is JMESPath compiled
into a predicate.
"""

from __future__ import annotations

import difflib
import hashlib
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jmespath

from ..engine.canonical import CanonicalError, check_json, payload_text
from ..engine.graph import (
    NAME_PATTERN,
    Expression,
    GraphError,
    OnFailure,
    TaskGraph,
    TaskNode,
    Trigger,
)
from ..engine.spec import DEFAULT_ISOLATION, task_spec
from ..engine.untrusted import quoted
from ..files import read_capped
from .builtins import builtin_problem, jmespath_message
from .errors import Problem, WorkflowError
from .limits import Limits, current
from .plain import PlainDefaults, PlainTask, PlainWorkflow, plain_spec
from .refs import LazyCallable, parse_ref
from .yamlpos import Located, YamlSyntaxError, compose

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..engine.diff import PlanDiff
    from ..engine.scheduler import Plan
    from .model import Defaults, TaskSpec, WorkflowSpec

    Spec = WorkflowSpec | PlainWorkflow

__all__ = [
    "Workflow",
    "diff_workflows",
    "load_workflow",
    "parse_shared",
    "parse_workflow",
]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Workflow:
    """A loaded workflow.

    Attributes:
        name: the workflow's name.
        description: free text.
        path: the file it came from, as given (``<string>`` for text).
        source: the full YAML text.
        digest: sha256 of the source text.
        graph: the validated task graph.
        payload: the default payload.
        on_failure: ``stop`` or ``continue``.
        specs: each task's effective spec (defaults applied), for display and diffs.
    """

    name: str
    description: str
    path: str
    source: str
    digest: str
    graph: TaskGraph
    payload: dict[str, Any]
    on_failure: OnFailure
    specs: Mapping[str, Mapping[str, Any]]

    def settings(self) -> dict[str, Any]:
        """The workflow-level settings a plan diff compares."""
        return {
            "name": self.name,
            "description": self.description,
            "on_failure": self.on_failure.value,
        }


def diff_workflows(
    old: Workflow,
    old_payload: Any,
    new: Workflow,
    new_payload: Any,
    plans: tuple[Plan, Plan] | None = None,
) -> PlanDiff:
    """The plan diff of two workflow versions, their workflow-level settings included
    (``plans``: their deterministic plans, if the caller has them)."""
    from ..engine.diff import plan_diff

    return plan_diff(
        old.graph,
        old_payload,
        new.graph,
        new_payload,
        old_settings=old.settings(),
        new_settings=new.settings(),
        plans=plans,
    )


def load_workflow(path: str | Path) -> Workflow:
    """Read and load a workflow file.

    Raises:
        WorkflowError: the file is missing, too large, or invalid (every problem listed).
    """
    shown = str(path)
    file = Path(path)
    limit = current().file_bytes

    def fail(message: str) -> WorkflowError:
        return WorkflowError([Problem(shown, 0, 0, message)])

    try:
        data = read_capped(file, limit)
        if data is None:
            raise fail(f"file is over {limit:,} bytes, the limit")
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 text: {exc.reason}") from None
    except OSError as exc:  # NotRegularFileError too: a FIFO or a device is never read
        raise fail(f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL in the path
        raise fail(f"cannot read: {exc}") from None
    return parse_workflow(text, shown, base=file.resolve().parent)


_SHARED: weakref.WeakValueDictionary[tuple[str, str, Path | None], Workflow] = (
    weakref.WeakValueDictionary()
)


def parse_shared(text: str, path: str, base: Path | None) -> Workflow:
    """:func:`parse_workflow` of a recorded source (an export's, a stored run's), parsed once
    while anything holds it: two runs of one workflow (a diff of two of them) share one
    parsed form, some 190 MB at 100,000 tasks, and one graph, which the plan diff compares
    by identity. Only for what nothing changes: a graph the Python API grows is built, not
    parsed.

    Raises:
        WorkflowError: as :func:`parse_workflow`.
    """
    key = (text, path, base)
    workflow = _SHARED.get(key)
    if workflow is None:
        workflow = _SHARED[key] = parse_workflow(text, path, base=base)
    return workflow


def parse_workflow(
    text: str, path: str = "<string>", base: Path | None = None, limits: Limits | None = None
) -> Workflow:
    """Load a workflow from YAML text.

    Args:
        text: the YAML source.
        path: how to name the file in messages.
        base: folder that ``module:function`` references resolve against first.
        limits: the caps on reading (default: :func:`~harness_tui.workflow.limits.current`).

    Raises:
        WorkflowError: every problem, each with ``path:line:col``.
    """
    limits = limits or current()
    # Characters first: a UTF-8 byte count is at most four times that, so a short text needs
    # no encoding to know it is within the cap.
    if len(text) * 4 > limits.file_bytes and len(text.encode("utf-8", "surrogatepass")) > (
        limits.file_bytes
    ):
        raise WorkflowError([Problem(path, 0, 0, f"text exceeds {limits.file_bytes:,} bytes")])
    try:
        located = compose(text, limits)
    except YamlSyntaxError as exc:
        raise WorkflowError([Problem(path, exc.line, exc.column, exc.message)]) from None
    return _Builder(path, located, text, base, limits).build()


class _Builder:
    def __init__(
        self, path: str, located: Located, text: str, base: Path | None, limits: Limits
    ) -> None:
        self.limits = limits
        self.path = path
        self.located = located
        self.text = text
        self.base = base
        self.problems: list[Problem] = []

    def problem(self, at: tuple[str | int, ...], message: str, key: bool = False) -> None:
        line, column = self.located.key_position(at) if key else self.located.position(at)
        self.problems.append(Problem(self.path, line, column, message))

    def build(self) -> Workflow:
        data = self.located.data
        for dup_path, first, second in self.located.duplicates:
            what = "task name" if dup_path[:1] == ("tasks",) and len(dup_path) == 2 else "key"
            message = f"duplicate {what} {dup_path[-1]!r} (first defined at line {first[0]})"
            self.problems.append(Problem(self.path, second[0], second[1], message))
        if not isinstance(data, dict):
            self.problem((), "a workflow file is a mapping with at least 'name' and 'tasks'")
            raise WorkflowError(self.problems)
        tasks = data.get("tasks")
        if isinstance(tasks, dict) and len(tasks) > self.limits.tasks:
            self.problem(("tasks",), f"{len(tasks):,} tasks; the limit is {self.limits.tasks:,}")
            raise WorkflowError(self.problems)
        spec = self._validate(data)
        defaults = spec.defaults if spec else self._defaults(data)
        nodes = self._nodes(tasks if isinstance(tasks, dict) else {}, defaults, spec)
        self._check_payload(data.get("payload", {}))
        graph = None
        try:
            graph = TaskGraph.from_nodes(nodes)
        except GraphError as exc:
            self._graph_problems(exc)
        if self.problems or spec is None or graph is None:
            raise WorkflowError(self.problems)
        return Workflow(
            name=spec.name,
            description=spec.description,
            path=self.path,
            source=self.text,
            digest=hashlib.sha256(self.text.encode()).hexdigest(),
            graph=graph,
            payload=spec.payload,
            on_failure=OnFailure(spec.on_failure),
            specs=_Specs(graph),
        )

    def _check_payload(self, payload: Any) -> None:
        if not isinstance(payload, dict):
            return
        try:
            check_json(payload, "payload")
        except CanonicalError as exc:
            self.problem(_split_path(exc.path), f"payload is not JSON: {exc}")
            return
        size = len(payload_text(payload).encode("utf-8", "surrogatepass"))
        if size > self.limits.payload_bytes:
            self.problem(
                ("payload",),
                f"payload is {size:,} bytes as JSON; the limit is {self.limits.payload_bytes:,}",
            )

    def _validate(self, data: dict[str, Any]) -> Spec | None:
        plain = plain_spec(data)
        if plain is not None:
            return plain
        # Deferred: building the pydantic models costs more than loading a small file.
        from pydantic import ValidationError

        from .model import WorkflowSpec

        try:
            return WorkflowSpec.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors():
                self._pydantic_problem(error)
            return None

    def _defaults(self, data: dict[str, Any]) -> Defaults:
        from pydantic import ValidationError

        from .model import Defaults

        try:
            return Defaults.model_validate(data.get("defaults", {}))
        except ValidationError:
            return Defaults()

    def _pydantic_problem(self, error: Any) -> None:
        loc = tuple(error["loc"])
        where = _dotted(loc)
        kind = error["type"]
        if kind == "extra_forbidden":
            parent = loc[:-1]
            model = _model_at(parent)
            allowed = sorted(model.model_fields) if model is not None else []
            allowed = ["with" if name == "with_" else name for name in allowed]
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            owner = _dotted(parent) or "the workflow"
            self.problem(loc, f"unknown key {quoted(loc[-1])} in {owner}{hint}", key=True)
        elif kind == "missing":
            owner = _dotted(loc[:-1]) or "the workflow"
            self.problem(loc[:-1], f"{owner}: missing required key {loc[-1]!r}")
        else:
            value = error.get("input")
            shown = f" (got {quoted(value)})" if isinstance(value, str | int | float | bool) else ""
            self.problem(loc, f"{where}: {error['msg']}{shown}")

    def _nodes(
        self, tasks: dict[Any, Any], defaults: Defaults | PlainDefaults, spec: Spec | None
    ) -> list[TaskNode]:
        specs: dict[str, TaskSpec | PlainTask] = {}
        for name, raw in tasks.items():
            task = spec.tasks[name] if spec is not None else _task_spec(raw)
            if task is not None:  # else already reported by the whole-file validation
                specs[name] = task
        self._check_refs(specs)
        self._check_params(specs)
        triggers = {trigger.value: trigger for trigger in Trigger}
        # One LazyCallable per reference (and isolation): tasks that share one import it once.
        made: dict[tuple[str, str], LazyCallable] = {}

        def calls(ref: str, isolation: str) -> LazyCallable:
            key = (ref, isolation)
            found = made.get(key)
            if found is None:
                found = made[key] = LazyCallable(ref, self.base, isolation)
            return found

        retries, timeout = defaults.max_retries, defaults.timeout_seconds
        interval = defaults.retry_interval
        nodes = []
        for name, task in specs.items():
            when = None
            if task.when is not None:
                when = self._condition(task.when, ("tasks", name, "when"))
            isolation = task.isolation or defaults.isolation
            nodes.append(
                TaskNode(
                    name=str(name),
                    fn=calls(task.run, isolation),
                    depends_on=tuple(task.depends_on),
                    max_retries=retries if task.max_retries is None else task.max_retries,
                    timeout_seconds=timeout
                    if task.timeout_seconds is None
                    else task.timeout_seconds,
                    retry_interval=interval if task.retry_interval is None else task.retry_interval,
                    fallback=calls(task.fallback, isolation) if task.fallback else None,
                    when=when,
                    trigger=triggers[task.trigger],
                    params=task.with_,
                    description=task.description,
                    ref=task.run,
                    fallback_ref=task.fallback or "",
                    when_source=task.when or "",
                )
            )
        nodes.extend(_stand_ins(tasks, specs))
        return nodes

    def _check_refs(self, specs: Mapping[str, TaskSpec | PlainTask]) -> None:
        # Thousands of tasks share a handful of references: each is parsed once.
        messages: dict[str, str | None] = {}
        for name, task in specs.items():
            for field, ref in (("run", task.run), ("fallback", task.fallback)):
                if ref is None:
                    continue
                if ref not in messages:
                    messages[ref] = parse_ref(ref)
                if messages[ref]:
                    self.problem(("tasks", name, field), str(messages[ref]))
            if task.run.startswith("builtin:"):
                message = builtin_problem(task.run.removeprefix("builtin:"), task.with_)
                if message:
                    self.problem(("tasks", name, "with"), message)

    def _check_params(self, specs: Mapping[str, TaskSpec | PlainTask]) -> None:
        try:  # all at once; one by one only to say where a problem is
            check_json([task.with_ for task in specs.values()], "with")
            return
        except CanonicalError:
            pass
        for name, task in specs.items():
            try:
                check_json(task.with_, "with")
            except CanonicalError as exc:
                self.problem(("tasks", name, "with"), f"parameters are not JSON: {exc}")

    def _condition(self, source: str, at: tuple[str | int, ...]) -> Any:
        try:
            return Condition(source, compile_when(source))
        except ValueError as exc:
            self.problem(at, str(exc))
            return None

    def _graph_problems(self, error: GraphError) -> None:
        for problem in error.problems:
            task = problem.tasks[0] if problem.tasks else ""
            at: tuple[str | int, ...] = ("tasks", task)
            if problem.kind in ("unknown_dependency", "duplicate") and len(problem.tasks) == 2:
                deps = self.located.data["tasks"][task].get("depends_on", [])
                index = deps.index(problem.tasks[1]) if problem.tasks[1] in deps else 0
                at = ("tasks", task, "depends_on", index)
                if problem.kind == "duplicate":
                    index = len(deps) - 1 - deps[::-1].index(problem.tasks[1])
                    at = ("tasks", task, "depends_on", index)
            elif problem.kind == "self_dependency":
                at = ("tasks", task, "depends_on")
            elif problem.kind == "invalid_field":
                continue  # pydantic already reported these with positions
            self.problem(at, problem.message, key=len(at) == 2)


class _Specs(Mapping[str, Mapping[str, Any]]):
    """Each task's effective spec, made when first asked for: a workbench shows a few, and
    making all of them cost a tenth of loading 10k tasks."""

    def __init__(self, graph: TaskGraph) -> None:
        self._graph = graph
        self._made: dict[str, dict[str, Any]] = {}

    def __getitem__(self, name: str) -> dict[str, Any]:
        found = self._made.get(name)
        if found is None:
            node = self._graph.nodes[name]
            # As the file set it: dependencies in declared order, numbers as written.
            found = self._made[name] = {
                **task_spec(node),
                "depends_on": list(node.depends_on),
                "retry_interval": node.retry_interval,
                "isolation": getattr(node.fn, "isolation", DEFAULT_ISOLATION),
                "description": node.description,
            }
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._graph.nodes)

    def __len__(self) -> int:
        return len(self._graph.nodes)


def compile_when(source: str) -> Any:
    """``source`` compiled as JMESPath, nested at most :attr:`Limits.depth` levels deep (the
    parser and the evaluation recurse once per level).

    Raises:
        ValueError: one line saying why it is not a usable ``when:``.
    """
    limit = current().depth
    try:
        compiled = jmespath.compile(source)
    except jmespath.exceptions.JMESPathError as exc:
        raise ValueError(f"invalid JMESPath in 'when': {jmespath_message(exc)}") from None
    except RecursionError:
        raise ValueError(f"'when' is nested more than {limit} levels deep") from None
    stack = [(compiled.parsed, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise ValueError(f"'when' is nested more than {limit} levels deep")
        children = node.get("children") if isinstance(node, dict) else None
        for child in children if isinstance(children, list) else ():
            stack.append((child, depth + 1))
    return compiled


class Condition(Expression):
    """A compiled ``when:`` expression: truthy per JMESPath (false, null and empty are false)."""

    __slots__ = ("compiled", "source")

    def __init__(self, source: str, compiled: Any) -> None:
        self.source = source
        self.compiled = compiled

    def __repr__(self) -> str:
        return f"Condition({self.source!r})"

    def __call__(self, scope: Mapping[str, Any]) -> bool:
        value = self.compiled.search(
            {"payload": scope["payload"], "results": dict(scope["results"])}
        )
        if value is None or value is False:
            return False
        return not (isinstance(value, str | list | dict) and not value)


def _task_spec(raw: Any) -> TaskSpec | None:
    """A task that validates on its own in a file that does not (its problems still count)."""
    from pydantic import ValidationError

    from .model import TaskSpec

    if not isinstance(raw, dict):
        return None
    try:
        return TaskSpec.model_validate(raw)
    except ValidationError:
        return None


def _stand_ins(tasks: Mapping[Any, Any], valid: Mapping[str, Any]) -> list[TaskNode]:
    """A bare node for each task whose own fields are wrong (already reported), so the graph
    check neither calls it an unknown dependency nor misses a cycle through it."""
    nodes = []
    for name, raw in tasks.items():
        if name in valid or not isinstance(name, str):
            continue
        deps = raw.get("depends_on") if isinstance(raw, dict) else None
        # A dependency that is no task name at all was reported as such: not again as unknown.
        named = (
            [d for d in deps if isinstance(d, str) and NAME_PATTERN.fullmatch(d)]
            if isinstance(deps, list)
            else []
        )
        nodes.append(TaskNode(name=name, depends_on=tuple(named)))
    return nodes


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _split_path(path: str) -> tuple[str | int, ...]:
    """``payload.a[2].b`` -> ``("payload", "a", 2, "b")`` (best effort, for positions)."""
    parts: list[str | int] = []
    for chunk in path.replace("[", ".[").split("."):
        if not chunk:
            continue
        if chunk.startswith("[") and chunk.endswith("]"):
            inner = chunk[1:-1]
            parts.append(int(inner) if inner.isdigit() else inner.strip('"'))
        else:
            parts.append(chunk)
    return tuple(parts)


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    from .model import Defaults, TaskSpec, WorkflowSpec

    if loc == ():
        return WorkflowSpec
    if loc == ("defaults",):
        return Defaults
    if len(loc) == 2 and loc[0] == "tasks":
        return TaskSpec
    return None
