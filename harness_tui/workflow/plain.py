"""The common case of :mod:`.model` without pydantic: a workflow whose every value is plainly
valid becomes the same specs the models would make, for a fraction of their cost (building the
model classes takes longer than loading a small file; a ``validate`` pays it for nothing).

:func:`plain_spec` accepts a strict subset of what the models accept and gives the values they
would give (an ``int`` in a seconds field becomes a ``float``; dicts and lists are copies).
Anything else (a wrong type, an unknown key, ``with_`` for ``with``, a bool, a float count, a
value out of range) gives ``None``, and the loader asks the models, which stay the one
authority on what is valid and on every message. ``tests/workflow/test_plain_spec.py`` checks
the two agree.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from .limits import MAX_RETRY_INTERVAL_SECONDS, MAX_TIMEOUT_SECONDS

__all__ = ["MAX_RETRIES", "TASK_NAME_PATTERN", "PlainDefaults", "PlainTask", "PlainWorkflow"]

TASK_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$"
MAX_RETRIES = 1000
_NAME = re.compile(TASK_NAME_PATTERN.removeprefix("^").removesuffix("$"))
_ISOLATIONS = ("in-process", "process")
_TRIGGERS = ("all_succeeded", "none_failed", "all_done")


class _NotPlain(Exception):
    """A value the models must judge (maybe valid, maybe not)."""


@dataclass(slots=True, kw_only=True)
class PlainDefaults:
    """:class:`.model.Defaults`, plainly valid."""

    max_retries: int = 0
    retry_interval: float = 0.0
    timeout_seconds: float | None = None
    isolation: str = "in-process"


@dataclass(slots=True, kw_only=True)
class PlainTask:
    """:class:`.model.TaskSpec`, plainly valid."""

    run: str
    description: str = ""
    depends_on: list[str] = field(default_factory=list)
    max_retries: int | None = None
    retry_interval: float | None = None
    timeout_seconds: float | None = None
    fallback: str | None = None
    isolation: str | None = None
    when: str | None = None
    trigger: str = "all_succeeded"
    with_: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class PlainWorkflow:
    """:class:`.model.WorkflowSpec`, plainly valid."""

    name: str
    description: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    defaults: PlainDefaults = field(default_factory=PlainDefaults)
    on_failure: str = "stop"
    tasks: dict[str, PlainTask]


def plain_spec(data: Any) -> PlainWorkflow | None:
    """The spec of a plainly valid workflow mapping, or ``None`` (ask the models)."""
    try:
        return _workflow(data)
    except _NotPlain:
        return None


def _workflow(data: Any) -> PlainWorkflow:
    values = _fields(data, _WORKFLOW)
    if "name" not in values or "tasks" not in values:
        raise _NotPlain
    return PlainWorkflow(**values)


def _fields(data: Any, checks: dict[str, Any]) -> dict[str, Any]:
    if type(data) is not dict:
        raise _NotPlain
    values = {}
    for key, value in data.items():
        check = checks.get(key)
        if check is None:
            raise _NotPlain
        values[key] = check(value)
    return values


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _NotPlain
    return value


def _name(value: Any) -> str:
    if type(value) is not str or not _NAME.fullmatch(value):
        raise _NotPlain
    return value


def _one_of(*allowed: str) -> Any:
    def check(value: Any) -> str:
        if type(value) is not str or value not in allowed:
            raise _NotPlain
        return value

    return check


def _optional(check: Any) -> Any:
    return lambda value: None if value is None else check(value)


def _mapping(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise _NotPlain
    for key in value:
        if type(key) is not str:
            raise _NotPlain
    return dict(value)


def _count(value: Any) -> int:
    if type(value) is not int or not 0 <= value <= MAX_RETRIES:
        raise _NotPlain
    return value


def _seconds(low: float, high: float, open_low: bool) -> Any:
    def check(value: Any) -> float:
        if not (type(value) is int or (type(value) is float and math.isfinite(value))):
            raise _NotPlain
        if value > high or value < low or (open_low and value == low):
            raise _NotPlain
        return float(value)

    return check


def _names(value: Any) -> list[str]:
    if type(value) is not list:
        raise _NotPlain
    return [_name(item) for item in value]


def _tasks(value: Any) -> dict[str, PlainTask]:
    tasks = _mapping(value)
    if not tasks:
        raise _NotPlain
    return {name: _task(raw) for name, raw in tasks.items()}


def _task(raw: Any) -> PlainTask:
    values = _fields(raw, _TASK)
    if "run" not in values:
        raise _NotPlain
    values["with_"] = values.pop("with", {})
    return PlainTask(**values)


def _defaults(raw: Any) -> PlainDefaults:
    return PlainDefaults(**_fields(raw, _DEFAULTS))


_interval = _seconds(0, MAX_RETRY_INTERVAL_SECONDS, open_low=False)
_timeout = _seconds(0, MAX_TIMEOUT_SECONDS, open_low=True)
_DEFAULTS = {
    "max_retries": _count,
    "retry_interval": _interval,
    "timeout_seconds": _optional(_timeout),
    "isolation": _one_of(*_ISOLATIONS),
}
_TASK = {
    "run": _text,
    "description": _text,
    "depends_on": _names,
    "max_retries": _optional(_count),
    "retry_interval": _optional(_interval),
    "timeout_seconds": _optional(_timeout),
    "fallback": _optional(_text),
    "isolation": _optional(_one_of(*_ISOLATIONS)),
    "when": _optional(_text),
    "trigger": _one_of(*_TRIGGERS),
    "with": _mapping,
}
_WORKFLOW = {
    "name": _name,
    "description": _text,
    "payload": _mapping,
    "defaults": _defaults,
    "on_failure": _one_of("stop", "continue"),
    "tasks": _tasks,
}
