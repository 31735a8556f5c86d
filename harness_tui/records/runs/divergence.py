"""Where two runs part ways: the first divergent event, and every differing one.

Thanks to Merkle input digests a divergence report can say where a difference was born: the
same input digest with a different output means *this* task is non-deterministic; a different
input digest means the cause is upstream.
"""

from __future__ import annotations

import graphlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import eq, itemgetter
from typing import Any

from ...engine.diff import PlanDiff, json_changes
from ...engine.errors import HarnessError
from ...engine.events import Status, TraceEvent
from ...engine.untrusted import shorten
from ...workflow.loader import diff_workflows
from ..export import RunRecord
from ..export.overrides import Override, override_cause

__all__ = [
    "Divergence",
    "RecordComparison",
    "TaskDivergence",
    "TraceDiff",
    "change_line",
    "compare_records",
    "count_tasks",
    "explain",
    "overridden",
    "task_diff",
    "trace_diff",
]

_FIELDS = ("task", "task_id", "status", "attempt", "error", "input_digest", "output_digest")
_SPAN = slice(1, 1 + len(_FIELDS))
"""Where :data:`_FIELDS` are in a :class:`TraceEvent` (a test holds them there)."""


@dataclass(frozen=True, slots=True)
class Divergence:
    """One differing event.

    Attributes:
        seq: trace position.
        task: the task of the expected event (or of the actual one if the expected trace ended).
        task_id: its task id.
        field: the first differing canonical field (``missing``/``extra`` for a length change).
        expected: the expected value of that field.
        actual: the actual value.
        expected_value: the expected output, when the field is ``output_digest``.
        actual_value: likewise for the actual output.
        cause: a sentence: where the difference was born.
    """

    seq: int
    task: str
    task_id: str
    field: str
    expected: Any
    actual: Any
    expected_value: Any = None
    actual_value: Any = None
    cause: str = ""

    def describe(self) -> str:
        """One line for people."""
        line = (
            f"event {self.seq}: task {self.task} ({self.task_id}) {self.field}: "
            f"expected {_short(self.expected)}, got {_short(self.actual)}"
        )
        if self.expected_value is not None or self.actual_value is not None:
            line += f" (output {_short(self.expected_value)} vs {_short(self.actual_value)})"
        if self.cause:
            line += f" — {self.cause}"
        return line

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "task": self.task,
            "task_id": self.task_id,
            "field": self.field,
            "expected": self.expected,
            "actual": self.actual,
            "expected_value": self.expected_value,
            "actual_value": self.actual_value,
            "cause": self.cause,
        }


@dataclass(frozen=True, slots=True)
class TraceDiff:
    """The comparison of two traces."""

    differences: list[Divergence] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences

    @property
    def first(self) -> Divergence | None:
        return self.differences[0] if self.differences else None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _small(outputs: Mapping[str, str] | None, task: str) -> Any:
    """``task``'s output, whole (read only for a task whose output differs): a large one once
    came back as None, which reads as a null output (the line shortens it, the JSON need not)."""
    if outputs is None or task not in outputs:
        return None
    return json.loads(outputs[task])


def trace_diff(
    expected: Sequence[TraceEvent],
    actual: Sequence[TraceEvent],
    expected_outputs: Mapping[str, str] | None = None,
    actual_outputs: Mapping[str, str] | None = None,
) -> TraceDiff:
    """Compare two traces event by event (canonical fields only; timings never count)."""
    differences = []
    for seq in range(max(len(expected), len(actual))):
        if seq >= len(actual):
            e = expected[seq]
            differences.append(Divergence(seq, e.task, e.task_id, "missing", e.status.value, None))
            continue
        if seq >= len(expected):
            a = actual[seq]
            differences.append(Divergence(seq, a.task, a.task_id, "extra", None, a.status.value))
            continue
        e, a = expected[seq], actual[seq]
        if e[_SPAN] == a[_SPAN]:  # one comparison in C: 200,000 events in a replay
            continue
        for name in _FIELDS:
            left, right = getattr(e, name), getattr(a, name)
            if left == right:
                continue
            cause = ""
            expected_value = actual_value = None
            if name == "input_digest":
                cause = "its inputs differ: the cause is upstream (payload, params or an ancestor)"
            elif name == "output_digest":
                expected_value = _small(expected_outputs, e.task)
                actual_value = _small(actual_outputs, a.task)
                cause = "same inputs, different output: this task is non-deterministic"
            elif name == "status":
                cause = "the task behaved differently with the same inputs"
            differences.append(
                Divergence(
                    seq,
                    e.task,
                    e.task_id,
                    name,
                    left.value if hasattr(left, "value") else left,
                    right.value if hasattr(right, "value") else right,
                    expected_value,
                    actual_value,
                    cause,
                )
            )
            break
    return TraceDiff(differences)


@dataclass(frozen=True, slots=True)
class TaskDivergence:
    """How one task's part of two traces differs (traces aligned by task, not position).

    Attributes:
        task: the task (its name in the second run).
        kind: ``added`` (only in the second run), ``removed`` (only in the first),
            ``inputs`` (its input digest differs: the cause is upstream), ``status`` (same
            inputs, another final status), ``output`` (same inputs, another output: this task
            is non-deterministic), ``attempts`` (same outcome after another number of tries)
            or ``renamed`` (the same task under a new name, and nothing else differs).
        expected / actual: the differing values (statuses, digests or attempt counts).
        expected_value / actual_value: the outputs, when they differ.
        renamed_from: the task's name in the first run, when the workflow renamed it.
        cause: where the difference was born, when the workflows say (see :func:`explain`).
        same_outcome: its final status and output are equal in both runs (what a dependent
            sees did not change, whatever its inputs were).
    """

    task: str
    kind: str
    expected: Any = None
    actual: Any = None
    expected_value: Any = None
    actual_value: Any = None
    renamed_from: str | None = None
    cause: str = ""
    same_outcome: bool = False

    CAUSES = {
        "added": "only in the second run",
        "removed": "only in the first run",
        "inputs": "its inputs differ: the cause is upstream (payload, params or an ancestor)",
        "status": "same inputs, another outcome: the task behaved differently",
        "output": "same inputs, different output: this task is non-deterministic",
        "attempts": "same outcome after a different number of attempts",
        "renamed": "renamed; same inputs, outcome and output",
    }

    def describe(self, sides: tuple[str, str] = ("the first run", "the second run")) -> str:
        """One line for people; ``sides`` names the two runs (``added``/``removed`` say which
        one has the task)."""
        name = self.task
        if self.renamed_from is not None and self.kind != "renamed":
            name += f" (renamed from {self.renamed_from})"
        cause = self.cause or self.CAUSES[self.kind]
        if self.kind in ("added", "removed"):
            cause = f"only in {sides[self.kind == 'added']}"
        line = f"{name}: {cause}"
        if self.kind == "renamed":
            line += f" (was {self.renamed_from})"
        elif self.kind != "output" and self.expected != self.actual:
            # Digests say nothing to a person (the outputs follow), nor do two equal statuses.
            line += f" ({_short(self.expected)} -> {_short(self.actual)})"
        if self.expected_value is not None or self.actual_value is not None:
            line += f" (output {_short(self.expected_value)} -> {_short(self.actual_value)})"
        return line

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "kind": self.kind,
            "expected": self.expected,
            "actual": self.actual,
            "expected_value": self.expected_value,
            "actual_value": self.actual_value,
            "renamed_from": self.renamed_from,
            "cause": self.cause or self.CAUSES[self.kind],
        }


@dataclass(frozen=True, slots=True)
class _TaskPart:
    status: str
    attempts: int
    input_digest: str | None
    output_digest: str | None


def _parts(events: Sequence[TraceEvent]) -> dict[str, _TaskPart]:
    """Each task's last status, attempts, input and output digests, in trace order."""
    # Gathered field by field, one part made per task at the end: a 100,000-task trace
    # has 200,000 events.
    statuses: dict[str, Status] = {}
    attempts: dict[str, int] = {}
    inputs: dict[str, str] = {}
    outputs: dict[str, str] = {}
    for event in events:
        task = event.task
        statuses[task] = event.status
        if event.attempt > attempts.get(task, 0):
            attempts[task] = event.attempt
        if event.input_digest:
            inputs[task] = event.input_digest
        if event.output_digest:
            outputs[task] = event.output_digest
    return {
        task: _TaskPart(status.value, attempts.get(task, 0), inputs.get(task), outputs.get(task))
        for task, status in statuses.items()
    }


def _same_events(expected: Sequence[TraceEvent], actual: Sequence[TraceEvent]) -> bool:
    """Whether two traces hold the same events, position by position (timings never count)."""
    canonical = itemgetter(_SPAN)
    return len(expected) == len(actual) and all(
        map(eq, map(canonical, expected), map(canonical, actual))
    )


def _compare(
    task: str,
    a: _TaskPart,
    b: _TaskPart,
    outputs: Callable[[], tuple[Any, Any]],
    renamed_from: str | None,
) -> TaskDivergence | None:
    """How one task present in both runs differs, or None; ``outputs`` gives the two outputs
    (read only when they differ)."""
    values: tuple[Any, Any] = (None, None)
    if a.output_digest != b.output_digest:
        values = outputs()
    if a.input_digest != b.input_digest:
        same = a.status == b.status and a.output_digest == b.output_digest
        found = TaskDivergence(task, "inputs", a.status, b.status, *values, same_outcome=same)
    elif a.status != b.status:
        found = TaskDivergence(task, "status", a.status, b.status, *values)
    elif a.output_digest != b.output_digest:
        found = TaskDivergence(task, "output", a.output_digest, b.output_digest, *values)
    elif a.attempts != b.attempts:
        found = TaskDivergence(task, "attempts", a.attempts, b.attempts)
    elif renamed_from is not None:
        found = TaskDivergence(task, "renamed", renamed_from, task)
    else:
        return None
    return replace(found, renamed_from=renamed_from)


def task_diff(
    expected: Sequence[TraceEvent],
    actual: Sequence[TraceEvent],
    expected_outputs: Mapping[str, str] | None = None,
    actual_outputs: Mapping[str, str] | None = None,
    renames: Mapping[str, str] | None = None,
) -> list[TaskDivergence]:
    """Compare two traces task by task, whatever their order: what each task did differently,
    the first run's tasks in its trace order, then the tasks only the second run has.

    ``renames`` maps a task's name in the first run to its name in the second (from a plan
    diff of the two workflows): such a pair is compared as one task.
    """
    renames = dict(renames or {})
    if not renames and _same_events(expected, actual):
        return []  # each task did the same (a re-run that changed nothing: in one pass in C)
    old, new = _parts(expected), _parts(actual)
    matched = {renames.get(task, task) for task in old}
    found: list[TaskDivergence] = []
    for task in [*old, *(t for t in new if t not in matched)]:
        name = renames.get(task, task) if task in old else task
        a, b = old.get(task), new.get(name)
        if task not in old:
            a = None
        if a is None or b is None:
            kind = "added" if a is None else "removed"
            found.append(TaskDivergence(name, kind, a and a.status, b and b.status))
            continue

        def outputs(task: str = task, name: str = name) -> tuple[Any, Any]:
            return _small(expected_outputs, task), _small(actual_outputs, name)

        difference = _compare(name, a, b, outputs, task if name != task else None)
        if difference is not None:
            found.append(difference)
    return found


def explain(
    found: Sequence[TaskDivergence],
    plan: PlanDiff,
    depends_on: Mapping[str, Sequence[str]],
) -> list[TaskDivergence]:
    """Name where each ``inputs`` divergence was born, from the plan diff of the two runs'
    workflows: the task's own changed fields, a dependency whose outcome differs, else the
    nearest ancestors whose outcome differs (a task reads every ancestor's output through
    ``context.results``), or (where no ancestor's outcome differs) the payload.

    A dependency that ran with other inputs but ended with the same status and output is
    no cause: its dependent's input digest differs only because digests chain. When nothing
    else explains a difference, the line says so and names that dependency.

    Args:
        found: the divergences from :func:`task_diff`.
        plan: the plan diff of the first run's workflow and payload against the second's.
        depends_on: each task's dependencies in the second run's workflow.
    """
    differing = {d.task: d for d in found if d.kind != "removed"}
    payload = _payload_cause(plan)
    nearest: dict[str, frozenset[str]] | None = None  # computed once, when first needed
    explained = []
    for difference in found:
        if difference.kind != "inputs":
            explained.append(difference)
            continue
        change = plan.tasks.get(difference.task)
        deps = [differing[d] for d in depends_on.get(difference.task, ()) if d in differing]
        seen = [d for d in deps if d.kind != "attempts" and not d.same_outcome]
        reasons = _reasons(change.fields if change else {}, seen)
        if not seen:
            if nearest is None:
                nearest = _nearest_changed(differing, depends_on)
            far = sorted(nearest.get(difference.task, ()))
            if far:
                reasons.append(f"ancestor {', '.join(far)} differ" + "s" * (len(far) == 1)
                               + " (read through context.results)")  # fmt: skip
            elif payload:  # every task reads the payload; named where nothing else is
                reasons.append(payload)
        quiet = [d.task for d in deps if d.same_outcome]
        if not reasons and quiet:
            reasons.append(f"nothing it reads differs: upstream {', '.join(quiet)} had other "
                           "inputs but the same outcome and output")  # fmt: skip
        explained.append(replace(difference, cause="; ".join(reasons)))
    return explained


def _changed_outcome(difference: TaskDivergence | None) -> bool:
    """What a dependent can read of the task differs: its status or output (or it is new)."""
    return (
        difference is not None
        and difference.kind not in ("attempts", "renamed")
        and (not difference.same_outcome)
    )


def _nearest_changed(
    differing: Mapping[str, TaskDivergence], depends_on: Mapping[str, Sequence[str]]
) -> dict[str, frozenset[str]]:
    """Each task's nearest ancestors whose outcome differs (one pass in dependency order:
    linear in the graph, where a search per task would be quadratic on a long chain)."""
    nearest: dict[str, frozenset[str]] = {}
    empty: frozenset[str] = frozenset()
    for task in graphlib.TopologicalSorter(depends_on).static_order():
        found: frozenset[str] = empty
        for dep in depends_on.get(task, ()):
            near = frozenset((dep,)) if _changed_outcome(differing.get(dep)) else nearest[dep]
            found = found | near if found else near
        nearest[task] = found
    return nearest


def _reasons(own: Mapping[str, Any], deps: Sequence[TaskDivergence]) -> list[str]:
    """The task's own changed fields, then its dependencies that differ or were renamed."""
    reasons = ["its own " + "; ".join(_field_lines(own))] if own else []
    reasons.extend(f"upstream {d.renamed_from} is now {d.task}" for d in deps
                   if d.kind == "renamed")  # fmt: skip
    upstream = [d.task for d in deps if d.kind != "renamed"]
    if upstream:
        reasons.append(f"upstream {', '.join(upstream)} differ" + "s" * (len(upstream) == 1))
    return reasons


def count_tasks(count: int) -> str:
    """``1 task differs``, ``3 tasks differ``."""
    return f"{count} task differs" if count == 1 else f"{count} tasks differ"


def _field_lines(fields: Mapping[str, Any]) -> list[str]:
    """``with.env: "staging" -> "prod"`` for each changed field (``with`` value by value)."""
    lines: list[str] = []
    for name, value in fields.items():
        if (
            name == "with"
            and isinstance(value.get("old"), dict)
            and isinstance(value.get("new"), dict)
        ):
            lines.extend(
                change_line(c, f"with{c['path'][1:]}")
                for c in json_changes(value["old"], value["new"])
            )
        elif name == "depends_on":
            moves = [f"{sign}{task}" for sign, key in (("-", "removed"), ("+", "added"))
                     for task in value.get(key, ())]  # fmt: skip
            lines.append("depends_on: " + " ".join(moves))
        else:
            lines.append(f"{name}: {_short(value.get('old'))} -> {_short(value.get('new'))}")
    return lines


def change_line(change: Mapping[str, Any], where: str) -> str:
    """One :func:`~harness_tui.engine.diff.json_changes` entry for people, at ``where``
    (shortened: a path can quote a key of any length)."""
    where = shorten(where)
    if "added" in change:
        return f"{where} added: {_short(change['added'])}"
    if "removed" in change:
        return f"{where} removed (was {_short(change['removed'])})"
    return f"{where}: {_short(change['old'])} -> {_short(change['new'])}"


def _payload_cause(plan: PlanDiff) -> str:
    """``the payload changed: $.version: "1.0" -> "2.0"`` (the first few values), or ``""``."""
    if not plan.payload:
        return ""
    shown = [change_line(c, c["path"]) for c in plan.payload[:3]]
    more = len(plan.payload) - len(shown)
    return "the payload changed: " + "; ".join(shown) + (f" and {more} more" if more else "")


@dataclass(frozen=True, slots=True)
class RecordComparison:
    """Two run records compared: their workflows' plan diff and their traces task by task.

    Attributes:
        plan: the plan diff of the first record's workflow and payload against the second's;
            None when either embedded workflow cannot be read (the trace diff then stands
            alone).
        tasks: how each task's part of the traces differs, with causes named from ``plan``.
    """

    plan: PlanDiff | None
    tasks: list[TaskDivergence]


def compare_records(old: RunRecord, new: RunRecord) -> RecordComparison:
    """Compare two run exports: renamed tasks are paired, and each divergence born of a
    changed input says where from; one born of a what-if override (of either run) names it."""
    try:
        plans = (old.plan, new.plan) if old.plan_derived and new.plan_derived else None
        plan: PlanDiff | None = diff_workflows(
            old.workflow, old.payload, new.workflow, new.payload, plans
        )
    except HarnessError:
        plan = None
    overrides = [*old.overrides, *new.overrides]
    if plan is None:
        found = task_diff(old.events, new.events, old.outputs, new.outputs)
        return RecordComparison(None, overridden(found, overrides))
    renames = {c.renamed_from: c.task for c in plan.tasks.values() if c.renamed_from}
    found = task_diff(old.events, new.events, old.outputs, new.outputs, renames)
    depends = {name: node.depends_on for name, node in new.workflow.graph.nodes.items()}
    return RecordComparison(plan, overridden(explain(found, plan, depends), overrides))


def overridden(
    found: Sequence[TaskDivergence], overrides: Sequence[Override]
) -> list[TaskDivergence]:
    """Each divergence of a task a what-if override changed, with the override as its cause
    (a parameter's change follows it, as the plan diff says it)."""
    causes: dict[str, list[str]] = {}
    params = {o.task for o in overrides if o.kind == "with"}
    for override in overrides:
        cause = override_cause(override)
        if cause not in causes.setdefault(override.task, []):
            causes[override.task].append(cause)
    explained = []
    for difference in found:
        named = causes.get(difference.task)
        if named and difference.kind not in ("added", "removed"):
            own = difference.cause.removeprefix("its own ")
            if difference.task in params and own != difference.cause:  # the values, as diffed
                named = [c for c in named if not c.startswith("with.")]
                named.append(f"set by the user: {own}")
            difference = replace(difference, cause="; ".join(named))
        explained.append(difference)
    return explained
