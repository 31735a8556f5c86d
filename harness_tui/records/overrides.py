"""What-if overrides of a re-run (docs/recording.md, "What-if re-runs").

A re-run (:mod:`.fork`) may change what it starts from:

- ``output``: the task is not called; its output is the value given;
- ``answer``: the N-th (1-based) recorded exchange of one attempt of the task (HTTP and
  ``io.call`` counted in one sequence) answers with the value; the task re-runs;
- ``with``: the task re-runs with one ``with:`` parameter changed (a patch of the workflow).

Each override starts the re-run at its task: the task and its descendants run with the current
code, every other task keeps its record. The fork's export and store keep the overrides
beside ``forked_from``: outside the canonical trace, inside the checksum.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..engine.attempt import OK, Attempt, Executor, Outcome
from ..engine.canonical import check_json
from ..engine.exchanges import Exchange
from ..engine.untrusted import quoted
from ..workflow.errors import WorkflowError
from ..workflow.loader import Workflow, parse_workflow
from ..workflow.payload import PayloadError, parse_payload
from ..workflow.python_source import python_spec
from ..workflow.refs import PYTHON_REF
from ..workflow.yamlpos import YamlSyntaxError, compose
from .errors import RecordError, StoreError
from .model import FORMAT_VERSION_OVERRIDES
from .model import Override as OverrideModel
from .redaction import REPLACEMENT

__all__ = [
    "KINDS",
    "Override",
    "OverrideError",
    "OverridingExecutor",
    "add_overrides",
    "edit_answers",
    "override_cause",
    "overrides_of",
    "parse_override",
    "patch_workflow",
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
        """Its value was taken out of a redacted export (it cannot be applied again)."""
        return REPLACEMENT in json.dumps(self.value)


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
        value = parse_payload(parts["value"], where).value
    except PayloadError as exc:
        raise OverrideError(str(exc)) from None
    if kind == "answer":
        attempt, index = int(parts["attempt"]), int(parts["index"])
        if attempt < 1 or index < 1:
            raise OverrideError(f"{where}: attempts and exchanges count from 1")
        return Override(kind, parts["task"], value, attempt=attempt, index=index)
    if kind == "with":
        return Override(kind, parts["task"], value, param=parts["param"])
    return Override(kind, parts["task"], value)


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
    try:
        data = json.loads(text)
        if not isinstance(data, list):
            raise ValueError("not a list")
        checked = [OverrideModel.model_validate(item).model_dump() for item in data]
    except (ValueError, ValidationError, RecursionError):
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


def check_tasks(overrides: Iterable[Override], workflow: Workflow, where: str) -> None:
    """Refuse an override of a task ``workflow`` does not have, one given twice, and one of
    a task whose output is overridden (it is not called: nothing else of it applies).

    Raises:
        OverrideError: one line naming the option and the task.
    """
    seen: dict[tuple[Any, ...], Override] = {}
    for override in overrides:
        if override.task not in workflow.graph.nodes:
            raise OverrideError(f"{override.option}: no task {quoted(override.task)} in {where}")
        if override.key in seen:
            raise OverrideError(f"{override.option} is given twice")
        seen[override.key] = override
    outputs = {o.task for o in seen.values() if o.kind == "output"}
    for override in seen.values():
        if override.kind != "output" and override.task in outputs:
            raise OverrideError(
                f"{override.option}: {OPTIONS['output']} {override.task} already means the "
                "task is not called"
            )


# -- answers -----------------------------------------------------------------------------------


def _answered(exchange: Exchange, value: Any) -> Exchange:
    """``exchange`` answering ``value`` instead: a call returns it; an HTTP answer's body is
    it (a string as its text, anything else as JSON), with its status (200 if none came)."""
    if exchange.kind == "call":
        return replace(exchange, value=copy.deepcopy(value), error=None)
    if isinstance(value, str):
        body, kind = value.encode("utf-8"), None
    else:
        body, kind = check_json(value).encode("utf-8"), "application/json"
    dropped = {"content-length", "content-encoding", "transfer-encoding"}
    if kind is not None:
        dropped.add("content-type")
    headers = [(n, v) for n, v in exchange.response_headers if n.lower() not in dropped]
    if kind is not None:
        headers.append(("content-type", kind))
    headers.append(("content-length", str(len(body))))
    return replace(
        exchange,
        status=exchange.status if exchange.status is not None else 200,
        response_headers=tuple(headers),
        chunks=(body,),
        error=None,
    )


def edit_answers(
    recordings: MutableMapping[tuple[str, int], Sequence[Exchange]],
    overrides: Iterable[Override],
) -> None:
    """Apply the ``answer`` overrides to ``recordings`` (a session's, by ``(task, attempt)``).

    Raises:
        OverrideError: the attempt recorded no exchanges, or fewer than N.
    """
    for override in overrides:
        if override.kind != "answer":
            continue
        assert override.attempt is not None and override.index is not None
        key = (override.task, override.attempt)
        exchanges = sorted(recordings.get(key, ()), key=lambda e: e.seq)
        if override.index > len(exchanges):
            held = f"{len(exchanges)} exchange{'s' * (len(exchanges) != 1)}"
            raise OverrideError(
                f"{override.option}: attempt {override.attempt} of {override.task} recorded {held}"
            )
        exchanges[override.index - 1] = _answered(exchanges[override.index - 1], override.value)
        recordings[key] = exchanges


# -- parameters --------------------------------------------------------------------------------


def patch_workflow(workflow: Workflow, overrides: Iterable[Override],
                   base: Path | None) -> tuple[Workflow, tuple[Override, ...]]:  # fmt: skip
    """``workflow`` with the ``with`` overrides applied, and every override with its patch.

    The source is written again as JSON (which YAML reads as it is): comments and layout of
    the original are not kept, every value is.

    Args:
        base: where the workflow's ``module:function`` references are imported from.

    Raises:
        OverrideError: a Python-defined workflow, or a parameter the task does not have.
    """
    overrides = tuple(overrides)
    params = [o for o in overrides if o.kind == "with"]
    if not params:
        return workflow, overrides
    if python_spec(workflow) is not None or PYTHON_REF.match(workflow.path):
        raise OverrideError(
            f"{params[0].option}: the workflow is defined in Python; change the parameter in "
            "its code and give --workflow FILE.py:factory"
        )
    try:
        data = compose(workflow.source).data
    except YamlSyntaxError as exc:  # it parsed once: only a changed limit gets here
        raise OverrideError(f"{params[0].option}: the workflow cannot be read: {exc}") from None
    patched = []
    for override in params:
        node = workflow.graph.nodes[override.task]
        param = str(override.param)
        if param not in node.params:
            known = ", ".join(sorted(node.params)) or "none"
            raise OverrideError(
                f"{override.option}: task {override.task} has no parameter {quoted(param)} "
                f"(it has: {known})"
            )
        spec = data["tasks"][override.task]
        own = spec.setdefault("with", {})
        op = "replace" if param in own else "add"
        own[param] = copy.deepcopy(override.value)
        path = f"/tasks/{_pointer(override.task)}/with/{_pointer(param)}"
        patch = ({"op": op, "path": path, "value": override.value},)
        patched.append(replace(override, patch=patch))
    source = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        changed = parse_workflow(source, workflow.path, base=base)
    except WorkflowError as exc:
        raise OverrideError(f"{params[0].option}: {exc.problems[0].message}") from None
    for override in params:
        want = {**workflow.graph.nodes[override.task].params, str(override.param): override.value}
        if dict(changed.graph.nodes[override.task].params) != want:
            raise OverrideError(f"{override.option}: the patched workflow does not give the task "
                                "that parameter (its defaults override it)")  # fmt: skip
    done = iter(patched)
    return changed, tuple(next(done) if o.kind == "with" else o for o in overrides)


def _pointer(token: str) -> str:
    """A JSON Pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


# -- outputs -----------------------------------------------------------------------------------


class OverridingExecutor(Executor):
    """Answers the attempts of tasks whose output is overridden with that output, without
    calling them; runs every other attempt with ``inner``."""

    name = "overriding"

    def __init__(self, inner: Executor, outputs: Mapping[str, Any]) -> None:
        self.inner = inner
        self.outputs = dict(outputs)
        self.pickles = inner.pickles
        self.isolatable = inner.isolatable

    def run(self, attempt: Attempt) -> Outcome:
        if attempt.task in self.outputs:
            return Outcome(OK, copy.deepcopy(self.outputs[attempt.task]))
        return self.inner.run(attempt)

    def cancel(self, attempt: Attempt) -> None:
        self.inner.cancel(attempt)

    def interrupt(self) -> None:
        self.inner.interrupt()

    def start(self) -> None:
        self.inner.start()

    def close(self) -> None:
        self.inner.close()

    def capacity(self) -> int | None:
        return self.inner.capacity()


def set_outputs(overrides: Iterable[Override]) -> dict[str, Any]:
    """Task -> output of the ``output`` overrides."""
    return {o.task: o.value for o in overrides if o.kind == "output"}


# -- explaining --------------------------------------------------------------------------------


def override_cause(override: Override) -> str:
    """Where a difference was born, for ``diff``: ``output overridden by the user``."""
    if override.kind == "output":
        return "output overridden by the user"
    if override.kind == "answer":
        return f"recorded answer {override.index} of attempt {override.attempt} edited by the user"
    return f"with.{override.param} set by the user"
