"""How a what-if re-run applies its overrides (:mod:`..export.overrides`): a recorded answer
edited, a workflow parameter patched, an output set instead of calling the task
(docs/recording.md, "What-if re-runs")."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...engine.attempt import OK, Attempt, Executor, Outcome
from ...engine.canonical import check_json
from ...engine.exchanges import Exchange
from ...engine.untrusted import quoted
from ...workflow.errors import WorkflowError
from ...workflow.loader import Workflow, parse_workflow
from ...workflow.python_source import python_spec
from ...workflow.refs import PYTHON_REF
from ...workflow.yamlpos import YamlSyntaxError, compose
from ..export.overrides import OPTIONS, Override, OverrideError

__all__ = [
    "OverridingExecutor",
    "check_tasks",
    "edit_answers",
    "patch_workflow",
    "set_outputs",
]


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
        # Through JSON text, so that what YAML aliases share is copied apart: a parameter
        # set on one task must not reach another whose with: is the same *alias.
        data = json.loads(json.dumps(compose(workflow.source).data))
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
