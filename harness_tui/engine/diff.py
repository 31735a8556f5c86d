"""Plan diff: what a change to a workflow (or its payload) does to the run, before running it.

Structural and keyed by task name: each task is ``unchanged``, ``added``, ``removed``,
``moved`` (its place in the plan order changed relative to the others) or ``changed`` (with the
fields that changed); task id and level changes are reported beside. The two plans are aligned
row by row with :class:`difflib.SequenceMatcher` over task names.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from .canonical import check_json
from .graph import TaskGraph
from .scheduler import DeterministicScheduler, Plan, PlanStep
from .spec import SPEC_FIELDS, task_spec
from .untrusted import shown

__all__ = [
    "FIELDS",
    "MARKERS",
    "RUN_SETTINGS",
    "DiffKind",
    "PlanDiff",
    "PlanRow",
    "TaskChange",
    "json_changes",
    "plan_diff",
]

FIELDS = SPEC_FIELDS
"""The fields compared per task (see :mod:`.spec`)."""


class DiffKind(StrEnum):
    """What a change to the workflow does to one task (a ``StrEnum``: JSON holds the value)."""

    ADDED = "added"
    REMOVED = "removed"
    MOVED = "moved"
    CHANGED = "changed"
    RENAMED = "renamed"
    UNCHANGED = "unchanged"


CHANGE_KINDS = (
    DiffKind.ADDED, DiffKind.REMOVED, DiffKind.RENAMED, DiffKind.MOVED, DiffKind.CHANGED,
)  # fmt: skip
"""The kinds that count as a change, in summary order."""

MARKERS = {
    DiffKind.ADDED: "+", DiffKind.REMOVED: "-", DiffKind.MOVED: "↕", DiffKind.CHANGED: "~",
    DiffKind.RENAMED: "→", DiffKind.UNCHANGED: " ",
}  # fmt: skip
"""The one-character marker of each kind in side-by-side plans."""


@dataclass(frozen=True, slots=True)
class TaskChange:
    """How one task differs between the versions.

    Attributes:
        task: the task name.
        kind: what happened to the task.
        fields: changed fields, ``{field: {"old", "new"}}`` (for ``depends_on`` also
            ``"added"`` and ``"removed"`` lists).
        moved: its relative place in the plan changed (also true for some changed tasks).
        old_index / new_index: plan positions (None where absent).
        old_id / new_id: task ids (they differ when the payload changed).
        old_level / new_level: plan levels.
        renamed_from: for a ``renamed`` task, its old name.
    """

    task: str
    kind: DiffKind
    fields: dict[str, Any] = field(default_factory=dict)
    moved: bool = False
    old_index: int | None = None
    new_index: int | None = None
    old_id: str | None = None
    new_id: str | None = None
    old_level: int | None = None
    new_level: int | None = None
    renamed_from: str | None = None

    @property
    def id_changed(self) -> bool:
        """The task id differs between versions (the payload changed)."""
        return self.old_id is not None and self.new_id is not None and self.old_id != self.new_id

    @property
    def level_changed(self) -> bool:
        """The task sits at another depth of the DAG."""
        return (
            self.old_level is not None
            and self.new_level is not None
            and self.old_level != self.new_level
        )

    def to_json(self) -> dict[str, Any]:
        """The change as a JSON object."""
        return {
            "task": self.task, "kind": self.kind, "fields": self.fields, "moved": self.moved,
            "old_index": self.old_index, "new_index": self.new_index,
            "old_id": self.old_id, "new_id": self.new_id, "id_changed": self.id_changed,
            "old_level": self.old_level, "new_level": self.new_level,
            "level_changed": self.level_changed, "renamed_from": self.renamed_from,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class PlanRow:
    """One aligned row: the old step, the new step (either may be None) and the row's kind."""

    kind: DiffKind
    old: PlanStep | None
    new: PlanStep | None

    @property
    def task(self) -> str:
        """The row's task name."""
        step = self.new or self.old
        assert step is not None
        return step.task

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object."""
        return {
            "kind": self.kind,
            "old": None if self.old is None else self.old._asdict(),
            "new": None if self.new is None else self.new._asdict(),
        }


RUN_SETTINGS = ("on_failure",)
"""Workflow-level settings that change what a run does (``name`` and ``description`` do not)."""


@dataclass(frozen=True, slots=True)
class PlanDiff:
    """The structural difference between two plans.

    Attributes:
        tasks: how each task differs, by name.
        rows: the two plans aligned side by side.
        old_digest / new_digest: the plans' digests.
        payload: each value of the payload that differs, ``{"path", "old", "new"}`` (a value
            absent on one side is reported under ``"added"``/``"removed"``).
        settings: workflow-level settings that differ, ``{name: {"old", "new"}}``.
    """

    tasks: dict[str, TaskChange]
    rows: list[PlanRow]
    old_digest: str
    new_digest: str
    payload: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def counts(self) -> dict[DiffKind, int]:
        """How many tasks of each kind."""
        counts = dict.fromkeys(DiffKind, 0)
        for change in self.tasks.values():
            counts[change.kind] += 1
        return counts

    @property
    def identical(self) -> bool:
        """Same plan, same payload and settings, and no task changed."""
        return (
            self.old_digest == self.new_digest
            and not self.payload
            and not self.settings
            and all(c.kind is DiffKind.UNCHANGED for c in self.tasks.values())
        )

    @property
    def changes_run(self) -> bool:
        """Anything that can change what a run does (``--exit-code`` fails on it): the plan,
        a task, the payload, or a run setting such as ``on_failure``."""
        return (
            self.old_digest != self.new_digest
            or bool(self.payload)
            or any(name in RUN_SETTINGS for name in self.settings)
            or any(c.kind is not DiffKind.UNCHANGED for c in self.tasks.values())
        )

    def changes(self) -> list[TaskChange]:
        """Every task that is not unchanged, in new-plan order then removed ones."""
        order = {row.task: i for i, row in enumerate(self.rows)}
        changed = (c for c in self.tasks.values() if c.kind is not DiffKind.UNCHANGED)
        return sorted(changed, key=lambda c: order[c.task])

    def summary_line(self) -> str:
        """``2 added, 1 removed, 3 moved, 1 changed`` (plus task id changes, if any)."""
        counts = self.counts
        parts = [
            f"{counts[kind]} {kind}"
            for kind in CHANGE_KINDS
            if counts[kind] or kind is not DiffKind.RENAMED  # renames are rare: only when any
        ]
        ids = sum(1 for c in self.tasks.values() if c.id_changed)
        if ids:
            cause = " (the payload changed)" if self.payload else ""
            parts.append(f"{ids} task ids changed{cause}")
        # The settings are the workflow's own text (a description): shown, never obeyed.
        parts.extend(f"{name}: {shown(value['old'])} -> {shown(value['new'])}" for name, value in
                     self.settings.items())  # fmt: skip
        if self.payload:
            count = len(self.payload)
            parts.append(f"payload: {count} value{'s' if count != 1 else ''} changed")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The whole diff as JSON (see :meth:`to_text` for the canonical text)."""
        return {
            "identical": self.identical,
            "old_plan_digest": self.old_digest,
            "new_plan_digest": self.new_digest,
            "changes_run": self.changes_run,
            "summary": self.counts,
            "payload_changes": self.payload,
            "settings_changes": self.settings,
            "tasks": [self.tasks[name].to_json() for name in sorted(self.tasks)],
            "rows": [row.to_json() for row in self.rows],
        }

    def to_text(self) -> str:
        """Canonical JSON (byte-identical for the same inputs)."""
        return check_json(self.to_json())


def plan_diff(
    old_graph: TaskGraph,
    old_payload: Any,
    new_graph: TaskGraph,
    new_payload: Any,
    *,
    old_settings: Mapping[str, Any] | None = None,
    new_settings: Mapping[str, Any] | None = None,
    plans: tuple[Plan, Plan] | None = None,
) -> PlanDiff:
    """Compare the plans of two (graph, payload) pairs, their payloads value by value and,
    when given, their workflow-level settings (``on_failure``, ``name``, ``description``).
    ``plans``: the deterministic plans of the two pairs, when the caller has them already
    (two run records checked to hold them)."""
    if plans is None:
        plans = (
            DeterministicScheduler(old_graph).plan(old_payload),
            DeterministicScheduler(new_graph).plan(new_payload),
        )
    old_plan, new_plan = plans
    result = _diff(old_graph, old_plan, new_graph, new_plan)
    settings = {
        name: {"old": (old_settings or {}).get(name), "new": (new_settings or {}).get(name)}
        for name in sorted({*(old_settings or {}), *(new_settings or {})})
        if (old_settings or {}).get(name) != (new_settings or {}).get(name)
    }
    return replace(result, payload=json_changes(old_payload, new_payload), settings=settings)


def json_changes(old: Any, new: Any, path: str = "$") -> list[dict[str, Any]]:
    """Every value that differs between two JSON values, as ``{"path", "old", "new"}`` (or
    ``"added"``/``"removed"``), objects compared key by key, lists of equal length item by
    item. Values compare by canonical text, so ``1`` and ``true`` differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        changes = []
        for key in sorted({*old, *new}):
            where = f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]"
            if key not in old:
                changes.append({"path": where, "added": new[key]})
            elif key not in new:
                changes.append({"path": where, "removed": old[key]})
            else:
                changes.extend(json_changes(old[key], new[key], where))
        return changes
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [c for i, (a, b) in enumerate(zip(old, new, strict=True))
                for c in json_changes(a, b, f"{path}[{i}]")]  # fmt: skip
    if check_json(old) == check_json(new):
        return []
    return [{"path": path, "old": old, "new": new}]


def _diff(old_graph: TaskGraph, old_plan: Plan, new_graph: TaskGraph, new_plan: Plan) -> PlanDiff:
    if old_graph is new_graph and old_plan == new_plan:
        return _unchanged(new_graph, old_plan, new_plan)
    renames = _renames(old_graph, new_graph)  # old name -> new name
    old_fields = {
        renames.get(name, name): _mapped(task_spec(node), renames)
        for name, node in old_graph.nodes.items()
    }
    new_fields = {name: task_spec(node) for name, node in new_graph.nodes.items()}
    names = sorted(set(old_fields) | set(new_fields))
    pairs, in_place = _align(old_plan, new_plan, renames)
    old_at = {renames.get(name, name): i for name, i in old_plan.index_of.items()}
    new_at = new_plan.index_of
    was = {new: old for old, new in renames.items()}
    tasks: dict[str, TaskChange] = {}
    for name in names:
        old_step = old_plan.steps[old_at[name]] if name in old_at else None
        new_step = new_plan.steps[new_at[name]] if name in new_at else None
        fields = _field_changes(old_fields.get(name), new_fields.get(name))
        moved = old_step is not None and new_step is not None and name not in in_place
        kind = DiffKind.RENAMED if name in was else _kind(old_step, new_step, fields, moved)
        tasks[name] = TaskChange(
            task=name, kind=kind, fields=fields, moved=moved,
            old_index=old_step.index if old_step else None,
            new_index=new_step.index if new_step else None,
            old_id=old_step.task_id if old_step else None,
            new_id=new_step.task_id if new_step else None,
            old_level=old_step.level if old_step else None,
            new_level=new_step.level if new_step else None,
            renamed_from=was.get(name),
        )  # fmt: skip
    rows = [PlanRow(tasks[name].kind, old, new) for name, old, new in pairs]
    return PlanDiff(tasks, rows, old_plan.digest, new_plan.digest)


def _unchanged(graph: TaskGraph, old_plan: Plan, new_plan: Plan) -> PlanDiff:
    """The diff of two runs of one workflow (one parsed graph, one plan): no task can be
    renamed, changed or moved, so every task is unchanged in its place; no spec is made and
    no sequence aligned (at 100,000 tasks, seconds)."""
    unchanged = DiffKind.UNCHANGED
    steps = new_plan.steps
    at = new_plan.index_of
    tasks = {}
    for name in sorted(graph.nodes):
        step = steps[at[name]]
        index, task_id, level = step.index, step.task_id, step.level
        tasks[name] = TaskChange(name, unchanged, {}, False, index, index, task_id, task_id,
                                 level, level)  # fmt: skip
    rows = [PlanRow(unchanged, old, new) for old, new in zip(old_plan.steps, steps, strict=True)]
    return PlanDiff(tasks, rows, old_plan.digest, new_plan.digest)


def _mapped(spec: dict[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    """An old task's spec with its dependencies under their new names."""
    if not renames:
        return spec
    return {**spec, "depends_on": sorted(renames.get(d, d) for d in spec["depends_on"])}


def _renames(old_graph: TaskGraph, new_graph: TaskGraph) -> dict[str, str]:
    """Old name -> new name for tasks that were only renamed: a removed and an added task with
    the same spec, the same dependencies and the same dependents, each the other's only match
    (anything ambiguous stays a removal and an addition)."""
    removed = [n for n in old_graph.nodes if n not in new_graph]
    added = [n for n in new_graph.nodes if n not in old_graph]
    if not removed or not added:
        return {}

    def shape(graph: TaskGraph, name: str, alias: Mapping[str, str]) -> Any:
        spec = {k: v for k, v in task_spec(graph[name]).items() if k != "depends_on"}
        deps = sorted(alias.get(d, d) for d in graph[name].depends_on)
        dependents = sorted(alias.get(d, d) for d in graph.dependents(name))
        return check_json([spec, deps, dependents])

    # Compare removed tasks under a placeholder for "the renamed task itself".
    candidates: dict[str, list[str]] = {}
    for old in removed:
        old_shape = shape(old_graph, old, {old: "\0"})
        candidates[old] = [new for new in added if shape(new_graph, new, {new: "\0"}) == old_shape]
    renames = {}
    for old, news in candidates.items():
        if len(news) == 1 and sum(news[0] in other for other in candidates.values()) == 1:
            renames[old] = news[0]
    return renames


Pair = tuple[str, PlanStep | None, PlanStep | None]


def _align(
    old_plan: Plan, new_plan: Plan, renames: Mapping[str, str]
) -> tuple[list[Pair], set[str]]:
    """(task, old step, new step) side by side, and the tasks that kept their place (a renamed
    task is aligned under its new name)."""
    old_names = [renames.get(name, name) for name in old_plan.names]
    new_names = list(new_plan.names)
    matcher = difflib.SequenceMatcher(None, old_names, new_names, autojunk=False)
    in_place: set[str] = set()
    pairs: list[Pair] = []
    old_steps, new_steps = old_plan.steps, new_plan.steps
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            in_place.update(old_names[i1:i2])
            pairs.extend(zip(old_names[i1:i2], old_steps[i1:i2], new_steps[j1:j2], strict=True))
            continue
        pairs.extend((old_names[i], old_steps[i], None) for i in range(i1, i2))
        pairs.extend((new_names[j], None, new_steps[j]) for j in range(j1, j2))
    return pairs, in_place


def _kind(
    old: PlanStep | None, new: PlanStep | None, fields: Mapping[str, Any], moved: bool
) -> DiffKind:
    if old is None:
        return DiffKind.ADDED
    if new is None:
        return DiffKind.REMOVED
    if fields:
        return DiffKind.CHANGED
    return DiffKind.MOVED if moved else DiffKind.UNCHANGED


def _field_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, Any]:
    if old is None or new is None:
        return {}
    changes: dict[str, Any] = {}
    for name in SPEC_FIELDS:
        if old[name] == new[name]:
            continue
        change: dict[str, Any] = {"old": old[name], "new": new[name]}
        if name == "depends_on":
            change["added"] = sorted(set(new[name]) - set(old[name]))
            change["removed"] = sorted(set(old[name]) - set(new[name]))
        changes[name] = change
    return changes
