"""What-if overrides of a re-run, as a fork's export and store keep them (docs/recording.md,
"What-if re-runs").

A re-run (:mod:`..runs.fork`) may change what it starts from:

- ``output``: the task is not called; its output is the value given;
- ``answer``: the N-th (1-based) recorded exchange of one attempt of the task (HTTP and
  ``io.call`` counted in one sequence) answers with the value; the task re-runs;
- ``with``: the task re-runs with one ``with:`` parameter changed (a patch of the workflow).

The fork's export (format 1.3) and store keep them in ``forked_from.overrides``: outside the
canonical trace, inside the checksum. How a re-run applies them: :mod:`..runs.whatif`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...engine.untrusted import quoted
from ...workflow.limits import current
from ...workflow.payload import PayloadError, parse_payload
from ..errors import RecordError, StoreError
from .redaction import REPLACEMENT
from .version import FORMAT_VERSION_OVERRIDES

__all__ = [
    "KINDS",
    "OPTIONS",
    "Override",
    "OverrideError",
    "add_overrides",
    "override_cause",
    "overrides_of",
    "parse_override",
    "redacted_overrides",
    "stored_overrides",
]

KINDS = ("output", "answer", "with")
"""The kinds of override, as the export names them."""

OPTIONS = {"output": "--set-output", "answer": "--set-answer", "with": "--with"}
"""The ``rerun`` option of each kind."""

_NAME = r"[A-Za-z0-9_-]+"
_SYNTAX = {
    "output": (re.compile(rf"(?P<task>{_NAME})=(?P<value>.*)", re.S), "TASK=JSON|@FILE"),
    "answer": (
        re.compile(rf"(?P<task>{_NAME})#(?P<attempt>[0-9]+):(?P<index>[0-9]+)=(?P<value>.*)", re.S),
        "TASK#ATTEMPT:N=JSON|@FILE",
    ),
    "with": (re.compile(rf"(?P<task>{_NAME})\.(?P<param>[^=]+)=(?P<value>.*)", re.S),
             "TASK.PARAM=JSON|@FILE"),
}  # fmt: skip


class OverrideError(RecordError):
    """An override that cannot be applied (bad syntax, unknown task, no such exchange)."""


@dataclass(frozen=True, slots=True)
class Override:
    """One change a what-if re-run makes.

    Attributes:
        kind: ``output``, ``answer`` or ``with``.
        task: the task it changes (the re-run starts there).
        value: the new output, answer or parameter value (JSON).
        attempt: for ``answer``, the recorded attempt whose exchange is edited.
        index: for ``answer``, which exchange of it (1-based, in sequence order).
        param: for ``with``, the parameter.
        patch: for ``with``, the change to the workflow as JSON Patch (RFC 6902) operations.
    """

    kind: str
    task: str
    value: Any
    attempt: int | None = None
    index: int | None = None
    param: str | None = None
    patch: tuple[dict[str, Any], ...] = ()

    @property
    def key(self) -> tuple[str, str, int | None, int | None, str | None]:
        """What it changes: two overrides of one key cannot both apply."""
        return (self.kind, self.task, self.attempt, self.index, self.param)

    @property
    def option(self) -> str:
        """The override as the ``rerun`` option that makes it (the value left out)."""
        if self.kind == "answer":
            return f"{OPTIONS['answer']} {self.task}#{self.attempt}:{self.index}"
        if self.kind == "with":
            return f"{OPTIONS['with']} {self.task}.{self.param}"
        return f"{OPTIONS['output']} {self.task}"

    def to_json(self) -> dict[str, Any]:
        """The override as an export's ``forked_from.overrides[]`` holds it."""
        document: dict[str, Any] = {"task": self.task, "kind": self.kind, "value": self.value}
        if self.kind == "answer":
            document.update(attempt=self.attempt, exchange=self.index)
        if self.kind == "with":
            document.update(param=self.param, patch=[dict(op) for op in self.patch])
        return document

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Override:
        """An override read back from an export or the store (already schema-checked)."""
        return cls(
            str(data["kind"]),
            str(data["task"]),
            data.get("value"),
            data.get("attempt"),
            data.get("exchange"),
            data.get("param"),
            tuple(dict(op) for op in data.get("patch") or ()),
        )

    @property
    def redacted(self) -> bool:
        """Its value was taken out of a redacted export (it cannot be applied again): a
        redacted export replaces every override's value whole."""
        return isinstance(self.value, str) and self.value == REPLACEMENT


def parse_override(kind: str, text: str) -> Override:
    """An override as typed after its option (``summarize=@out.json``, ``ask#1:2={...}``,
    ``summarize.style="terse"``); the value is JSON, or ``@FILE`` holding JSON.

    Raises:
        OverrideError: the syntax is wrong or the value is not JSON (one line).
    """
    pattern, form = _SYNTAX[kind]
    option = OPTIONS[kind]
    found = pattern.fullmatch(text)
    if found is None:
        raise OverrideError(f"{option} {quoted(text[:80])}: expected {form}")
    parts = found.groupdict()
    where = f"{option} {parts['task']}"
    try:
        value = parse_payload(parts["value"], where, "value").value
    except PayloadError as exc:
        raise OverrideError(str(exc)) from None
    _check_exportable(value, where)
    if kind == "answer":
        if max(len(parts["attempt"]), len(parts["index"])) > _MAX_COUNT_DIGITS:
            raise OverrideError(f"{where}: no attempt or exchange has a number that long")
        attempt, index = int(parts["attempt"]), int(parts["index"])
        if attempt < 1 or index < 1:
            raise OverrideError(f"{where}: attempts and exchanges count from 1")
        return Override(kind, parts["task"], value, attempt=attempt, index=index)
    if kind == "with":
        return Override(kind, parts["task"], value, param=parts["param"])
    return Override(kind, parts["task"], value)


_MAX_COUNT_DIGITS = 18
"""Digits of an attempt or exchange number: more is no count a run reaches (and past 4,300
``int`` refuses the text)."""

_PLACE_DEPTH = 6
"""How deep an export holds an override's value: ``forked_from.overrides[i].patch[j].value``
(the reader counts ``forked_from`` as level 1)."""


def _check_exportable(value: Any, where: str) -> None:
    """Refuse a value the fork's export could not be read back with: nested deeper, or with
    a longer integer, than an export reader takes (``export_depth``, ``int_digits``).

    Raises:
        OverrideError: one line, ``where`` first.
    """
    limits = current()
    deepest = limits.export_depth - _PLACE_DEPTH
    max_bits = int(limits.int_digits * 3.33) + 1
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= deepest:
                raise OverrideError(
                    f"{where}: the value is nested more than {deepest} levels deep, more than "
                    "a run export holds"
                )
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif type(item) is int and item.bit_length() > max_bits:
            raise OverrideError(
                f"{where}: the value holds an integer of more than {limits.int_digits:,} "
                "digits, more than a run export holds"
            )


def overrides_of(document: Mapping[str, Any]) -> tuple[Override, ...]:
    """The overrides an export document's ``forked_from`` holds (none before export 1.3)."""
    forked = document.get("forked_from") or {}
    return tuple(Override.from_json(o) for o in forked.get("overrides") or ())


def stored_overrides(text: str | None, run_id: str) -> tuple[Override, ...]:
    """The overrides a store row holds (JSON, as :meth:`Override.to_json` makes them).

    Raises:
        StoreError: the text is not a list of overrides (one line).
    """
    if text is None:
        return ()
    # The export schema's pydantic models: only when overrides are there to be checked, so
    # that a run starts without them.
    from .model import Override as OverrideModel

    try:
        data = json.loads(text)
        if not isinstance(data, list):
            raise ValueError("not a list")
        checked = [OverrideModel.model_validate(item).model_dump() for item in data]
    except (ValueError, RecursionError):  # pydantic's ValidationError is a ValueError
        raise StoreError(f"run {run_id}: its stored overrides are damaged") from None
    return tuple(Override.from_json(item) for item in checked)


def add_overrides(
    document: dict[str, Any], overrides: Sequence[Override], *, redacted: bool
) -> None:
    """Put a fork's overrides in its export ``document`` (``forked_from.overrides``, format
    1.3), their values redacted if ``redacted``; nothing without overrides or a fork."""
    forked = document.get("forked_from")
    if not overrides or forked is None:
        return
    document["format_version"] = FORMAT_VERSION_OVERRIDES
    listed = redacted_overrides(overrides) if redacted else [o.to_json() for o in overrides]
    document["forked_from"] = {**forked, "overrides": listed}


def redacted_overrides(overrides: Iterable[Override]) -> list[dict[str, Any]]:
    """The overrides of a redacted export: every value (and a patch's value) replaced by the
    marker, and no digest of it written."""
    found = []
    for override in overrides:
        patch = tuple({**op, "value": REPLACEMENT} if "value" in op else op
                      for op in override.patch)  # fmt: skip
        found.append(replace(override, value=REPLACEMENT, patch=patch).to_json())
    return found


# -- explaining --------------------------------------------------------------------------------


def override_cause(override: Override) -> str:
    """Where a difference was born, for ``diff``: ``output overridden by the user``."""
    if override.kind == "output":
        return "output overridden by the user"
    if override.kind == "answer":
        return f"recorded answer {override.index} of attempt {override.attempt} edited by the user"
    return f"with.{override.param} set by the user"
