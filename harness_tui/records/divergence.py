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

__all__ = ["Divergence", "TraceDiff", "trace_diff"]

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
