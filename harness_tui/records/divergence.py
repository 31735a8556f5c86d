"""Where two runs part ways: the first divergent event, and every differing one.

Thanks to Merkle input digests a divergence report can say where a difference was born: the
same input digest with a different output means *this* task is non-deterministic; a different
input digest means the cause is upstream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.events import TraceEvent

__all__ = ["Divergence", "TaskDivergence", "TraceDiff", "task_diff", "trace_diff"]

_SMALL = 200
_FIELDS = ("task", "task_id", "status", "attempt", "error", "input_digest", "output_digest")


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
        expected_value: the expected output, when the field is ``output_digest`` and it is small.
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
    if outputs is None or task not in outputs or len(outputs[task]) > _SMALL:
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
        task: the task.
        kind: ``added`` (only in the second run), ``removed`` (only in the first),
            ``inputs`` (its input digest differs: the cause is upstream), ``status`` (same
            inputs, another final status), ``output`` (same inputs, another output: this task
            is non-deterministic) or ``attempts`` (same outcome after another number of tries).
        expected / actual: the differing values (statuses, digests or attempt counts).
        expected_value / actual_value: the outputs, when they differ and are small.
    """

    task: str
    kind: str
    expected: Any = None
    actual: Any = None
    expected_value: Any = None
    actual_value: Any = None

    CAUSES = {
        "added": "only in the second run",
        "removed": "only in the first run",
        "inputs": "its inputs differ: the cause is upstream (payload, params or an ancestor)",
        "status": "same inputs, another outcome: the task behaved differently",
        "output": "same inputs, different output: this task is non-deterministic",
        "attempts": "same outcome after a different number of attempts",
    }

    def describe(self) -> str:
        """One line for people."""
        line = f"{self.task}: {self.CAUSES[self.kind]}"
        if self.kind != "output":  # digests say nothing to a person; the outputs follow
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
        }


@dataclass(frozen=True, slots=True)
class _TaskPart:
    status: str
    attempts: int
    input_digest: str | None
    output_digest: str | None


def _parts(events: Sequence[TraceEvent]) -> dict[str, _TaskPart]:
    """Each task's last status, attempts, input and output digests, in trace order."""
    parts: dict[str, _TaskPart] = {}
    for event in events:
        before = parts.get(event.task)
        parts[event.task] = _TaskPart(
            event.status.value,
            max(event.attempt, before.attempts if before else 0),
            event.input_digest or (before.input_digest if before else None),
            event.output_digest or (before.output_digest if before else None),
        )
    return parts


def task_diff(
    expected: Sequence[TraceEvent],
    actual: Sequence[TraceEvent],
    expected_outputs: Mapping[str, str] | None = None,
    actual_outputs: Mapping[str, str] | None = None,
) -> list[TaskDivergence]:
    """Compare two traces task by task, whatever their order: what each task did differently,
    the first run's tasks in its trace order, then the tasks only the second run has."""
    old, new = _parts(expected), _parts(actual)
    found: list[TaskDivergence] = []
    for task in [*old, *(t for t in new if t not in old)]:
        a, b = old.get(task), new.get(task)
        if a is None or b is None:
            kind = "added" if a is None else "removed"
            found.append(TaskDivergence(task, kind, a and a.status, b and b.status))
        elif a.input_digest != b.input_digest:
            found.append(TaskDivergence(task, "inputs", a.status, b.status))
        elif a.status != b.status:
            found.append(TaskDivergence(task, "status", a.status, b.status))
        elif a.output_digest != b.output_digest:
            found.append(
                TaskDivergence(
                    task,
                    "output",
                    a.output_digest,
                    b.output_digest,
                    _small(expected_outputs, task),
                    _small(actual_outputs, task),
                )
            )
        elif a.attempts != b.attempts:
            found.append(TaskDivergence(task, "attempts", a.attempts, b.attempts))
    return found
