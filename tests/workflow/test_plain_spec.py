"""The pydantic-free reading of plainly valid workflows agrees with the models: whatever
``plain_spec`` accepts, the models accept with the same values (and types); the rest is left
to the models, whose messages stay the only ones."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness_tui.workflow.limits import MAX_RETRY_INTERVAL_SECONDS, MAX_TIMEOUT_SECONDS, Limits
from harness_tui.workflow.model import Defaults, TaskSpec, WorkflowSpec
from harness_tui.workflow.plain import PlainDefaults, PlainTask, PlainWorkflow, plain_spec
from harness_tui.workflow.yamlpos import YamlSyntaxError, compose

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted({*ROOT.glob("workflows/*.yaml"), *ROOT.glob("tests/**/*.yaml")})

BASE: dict[str, Any] = {
    "name": "base",
    "description": "d",
    "payload": {"user": "ada", "n": [1, 2.5, None]},
    "defaults": {"max_retries": 1, "retry_interval": 0.5, "timeout_seconds": 3},
    "on_failure": "continue",
    "tasks": {
        "a": {"run": "builtin:echo"},
        "b": {
            "run": "pkg.mod:fn",
            "depends_on": ["a"],
            "max_retries": 2,
            "retry_interval": 1,
            "timeout_seconds": 2.5,
            "fallback": "builtin:echo",
            "isolation": "process",
            "when": "payload.user",
            "trigger": "all_done",
            "with": {"k": {"deep": [1]}},
        },
    },
}

VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2.0, 2.5, 1000, 1001, 10**400, 0.0, -0.0, float("inf"),
    float("nan"), MAX_RETRY_INTERVAL_SECONDS, MAX_RETRY_INTERVAL_SECONDS + 1,
    MAX_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS + 0.5, "", "x", "in-process", "process", "stop",
    "continue", "all_done", "none_failed", "bad name", "ok_name", "a" * 128, "a" * 129,
    "line\n", [], ["a"], ["a", "a"], ["bad name"], [1], ("a",), {}, {"a": 1}, {1: 2},
]  # fmt: skip


def typed(value: Any) -> Any:
    """``value`` with every leaf's type spelled out (``1`` and ``1.0`` differ)."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(item) for item in value])
    return (type(value).__name__, repr(value))


def agree(data: Any) -> bool:
    """Check the one-way agreement on ``data``; whether the plain reading accepted it."""
    before = copy.deepcopy(data)
    plain = plain_spec(data)
    assert typed(data) == typed(before)  # the input is not changed
    if plain is None:
        return False
    try:
        model = WorkflowSpec.model_validate(data)
    except ValidationError as exc:  # pragma: no cover - the failure this test exists for
        pytest.fail(f"plain_spec accepted what the models refuse: {data!r}: {exc}")
    assert typed(dataclasses.asdict(plain)) == typed(model.model_dump())
    return True


def mutations(base: dict[str, Any]) -> Any:
    """``base`` with each field (and an unknown key) set to each of :data:`VALUES`, or gone."""
    places: list[tuple[str, ...]] = [(key,) for key in (*WorkflowSpec.model_fields, "x")]
    places += [("defaults", key) for key in (*Defaults.model_fields, "x")]
    places += [("tasks", "b", key) for key in (*TaskSpec.model_fields, "with", "x")]
    for place, value in itertools.product(places, [*VALUES, ...]):
        data = copy.deepcopy(base)
        parent = data
        for key in place[:-1]:
            parent = parent[key]
        if value is ...:
            parent.pop(place[-1], None)
        else:
            parent[place[-1]] = copy.deepcopy(value)
        yield data


def test_every_mutation_the_plain_reading_accepts_the_models_accept_alike() -> None:
    accepted = sum(agree(data) for data in mutations(BASE))
    refused = len(list(mutations(BASE))) - accepted
    # Both sides are exercised: plain values are read here, the rest left to the models.
    assert accepted > 100 and refused > 300


def test_the_files_in_the_repository_agree() -> None:
    accepted = 0
    for path in FILES:
        try:
            located = compose(path.read_text(encoding="utf-8"), Limits())
        except (YamlSyntaxError, UnicodeDecodeError):
            continue
        accepted += agree(located.data)
    assert accepted >= 10


def test_the_shipped_workflows_are_read_without_the_models() -> None:
    shipped = sorted(ROOT.glob("workflows/*.yaml"))
    assert len(shipped) >= 5, shipped  # a wrong ROOT would find none and check nothing
    for path in shipped:
        assert plain_spec(compose(path.read_text(encoding="utf-8"), Limits()).data) is not None


def test_the_plain_specs_have_the_models_fields_and_defaults() -> None:
    pairs = [
        (PlainDefaults(), Defaults()),
        (PlainTask(run="m:f"), TaskSpec(run="m:f")),
        (
            PlainWorkflow(name="w", tasks={"a": PlainTask(run="m:f")}),
            WorkflowSpec(name="w", tasks={"a": TaskSpec(run="m:f")}),
        ),
    ]
    for plain, model in pairs:
        assert typed(dataclasses.asdict(plain)) == typed(model.model_dump())  # type: ignore[call-overload]
