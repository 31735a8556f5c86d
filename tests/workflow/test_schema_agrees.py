"""The shipped JSON Schema says what the loader says, as an editor would read the file.

Each tricky file is read twice: by the loader, and by ``ruamel.yaml`` (YAML 1.2, the reading
of editors and schema validators) followed by ``jsonschema`` with the shipped schema. They
must agree on valid / invalid, except for the rules listed in ALLOWED, which no JSON Schema
can state (they are about the graph, a JMESPath grammar, or refused by design).
"""

from __future__ import annotations

import json

import jsonschema
import ruamel.yaml
from ruamel.yaml.constructor import SafeConstructor

from harness_tui.schemas import schema_text
from harness_tui.workflow.errors import WorkflowError
from harness_tui.workflow.loader import parse_workflow

HEAD = "name: w\ntasks:\n  a:\n    run: builtin:echo\n"


def _task(*lines: str) -> str:
    return HEAD + "".join(f"    {line}\n" for line in lines)


TRICKY = {
    "minimal": HEAD,
    "yes-is-a-string": _task("description: yes"),
    "date-is-a-string": _task("description: 2026-01-01"),
    "leading-zero-is-decimal": _task("max_retries: 010"),
    "octal": _task("max_retries: 0o17"),
    "hex": _task("max_retries: 0x10"),
    "integral-float-retries": _task("max_retries: 2.0"),
    "fractional-retries": _task("max_retries: 1.5"),
    "boolean-retries": _task("max_retries: true"),
    "string-retries": _task("max_retries: '3'"),
    "too-many-retries": _task("max_retries: 1001"),
    "exponent-timeout": _task("timeout_seconds: 1e-7"),
    "sexagesimal-timeout": _task("timeout_seconds: 1:30"),
    "zero-timeout": _task("timeout_seconds: 0"),
    "infinite-timeout": _task("timeout_seconds: .inf"),
    "huge-timeout": _task("timeout_seconds: 1e300"),
    "nan-timeout": _task("timeout_seconds: .nan"),
    "long-retry-interval": _task("retry_interval: 86401"),
    "negative-retry-interval": _task("retry_interval: -1"),
    "dotted-reference": _task("fallback: pkg.mod:obj.method"),
    "reference-without-colon": "name: w\ntasks:\n  a:\n    run: not a ref\n",
    "unknown-builtin": "name: w\ntasks:\n  a:\n    run: builtin:ecko\n",
    "bad-fallback": _task("fallback: '::'"),
    "unicode-reference": "name: w\ntasks:\n  a:\n    run: módulo:f\n",
    "tagged-string": "name: w\ntasks:\n  a:\n    run: !!str builtin:echo\n",
    "empty-when": _task("when: ''"),
    "bad-trigger": _task("trigger: sometimes"),
    "bad-on-failure": HEAD + "on_failure: explode\n",
    "unknown-key": _task("retries: 1"),
    "unknown-top-key": HEAD + "extra: 1\n",
    "unknown-defaults-key": HEAD + "defaults: {max_retry: 1}\n",
    "missing-run": "name: w\ntasks:\n  a:\n    description: x\n",
    "missing-name": "tasks:\n  a:\n    run: builtin:echo\n",
    "empty-name": "name: ''\ntasks:\n  a:\n    run: builtin:echo\n",
    "no-tasks": "name: w\ntasks: {}\n",
    "task-name-with-space": "name: w\ntasks:\n  check quota:\n    run: builtin:echo\n",
    "task-name-starting-with-digit": "name: w\ntasks:\n  1st:\n    run: builtin:echo\n",
    "task-name-too-long": f"name: w\ntasks:\n  {'a' * 129}:\n    run: builtin:echo\n",
    "depends-on-a-string": _task("depends_on: a"),
    "duplicate-dependency": HEAD + "  b:\n    run: builtin:echo\n    depends_on: [a, a]\n",
    "bad-dependency-name": HEAD + "  b:\n    run: builtin:echo\n    depends_on: [bad name]\n",
    "with-not-a-mapping": _task("with: [1]"),
    "payload-not-a-mapping": HEAD + "payload: [1]\n",
    "payload-date": HEAD + "payload: {when: 2026-01-01}\n",
    "duplicate-key": _task("max_retries: 1", "max_retries: 2"),
    # The rules no JSON Schema can state:
    "unknown-dependency": _task("depends_on: [ghost]"),
    "cycle": HEAD + "  b:\n    run: builtin:echo\n    depends_on: [c]\n"
    "  c:\n    run: builtin:echo\n    depends_on: [b]\n",
    "self-dependency": _task("depends_on: [a]"),
    "invalid-jmespath": _task("when: 'payload.['"),
    "select-without-expr": "name: w\ntasks:\n  a:\n    run: builtin:select\n",
    "merge-key": "name: w\npayload: {b: &b {run: builtin:echo}}\ntasks:\n  a:\n    <<: *b\n",
}

ALLOWED = {
    "unknown-dependency": "whether a named task exists is a fact about the whole graph",
    "cycle": "a cycle is a fact about the whole graph",
    "self-dependency": "a cycle of one task",
    "invalid-jmespath": "a schema pattern cannot parse the JMESPath grammar",
    "select-without-expr": "built-in parameters are checked per built-in, not by the schema",
    "nan-timeout": "JSON has no NaN, so JSON Schema says nothing about it",
    "merge-key": "the loader refuses merge keys (<<) by design; ruamel.yaml applies them",
}


def _editor_reading(text: str) -> object:
    """The file as YAML 1.2 reads it (timestamps stay strings, as in the core schema)."""

    class Core12(SafeConstructor):
        pass

    Core12.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)
    reader = ruamel.yaml.YAML(typ="safe", pure=True)
    reader.Constructor = Core12
    return reader.load(text)


def _schema_accepts(text: str, validator: jsonschema.Draft202012Validator) -> bool:
    try:
        data = _editor_reading(text)
    except ruamel.yaml.YAMLError:
        return False
    return bool(validator.is_valid(data))


def _loader_accepts(text: str) -> bool:
    try:
        parse_workflow(text)
    except WorkflowError:
        return False
    return True


def test_the_schema_agrees_with_the_loader_but_for_what_no_schema_can_say() -> None:
    schema = json.loads(schema_text("workflow"))
    validator = jsonschema.Draft202012Validator(schema)
    disagree = {
        name
        for name, text in TRICKY.items()
        if _loader_accepts(text) != _schema_accepts(text, validator)
    }
    assert disagree == set(ALLOWED)
    for name in ALLOWED:  # each one: the loader refuses what the schema lets through
        assert not _loader_accepts(TRICKY[name]) and _schema_accepts(TRICKY[name], validator)
    assert _loader_accepts(TRICKY["integral-float-retries"])
    assert not _loader_accepts(TRICKY["sexagesimal-timeout"])
