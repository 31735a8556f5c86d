from __future__ import annotations

import hashlib
import json
import math

import pytest

from harness_tui.engine.canonical import CanonicalError, check_json, digest, payload_text, task_id


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"b": 1, "a": [True, None, 2.5]}, '{"a":[true,null,2.5],"b":1}'),
        ("é\n", '"é\\n"'),
        (0, "0"),
        (-0.0, "-0.0"),
        ([], "[]"),
        ({"z": {"y": {}, "x": []}}, '{"z":{"x":[],"y":{}}}'),
    ],
)
def test_canonical_text(value: object, text: str) -> None:
    assert check_json(value) == text
    assert json.loads(text) == value


@pytest.mark.parametrize(
    ("value", "path", "type_name"),
    [
        ((1, 2), "$", "tuple"),
        ({"a": {1, 2}}, "$.a", "set"),
        ({"a": [1, b"x"]}, "$.a[1]", "bytes"),
        ({1: "one"}, "$[1]", "int"),
        ({"a": math.nan}, "$.a", "float"),
        ([math.inf], "$[0]", "float"),
        ({"my key": object()}, '$["my key"]', "object"),
    ],
)
def test_non_json_values_name_their_path(value: object, path: str, type_name: str) -> None:
    with pytest.raises(CanonicalError) as caught:
        check_json(value)
    assert caught.value.path == path
    assert caught.value.type_name == type_name
    assert str(caught.value).startswith(f"{path}: {type_name} is not a JSON value")


def test_circular_value_is_refused() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(CanonicalError, match="circular"):
        check_json(loop)


def test_task_id_is_invariant_i1_exactly() -> None:
    payload = {"user_id": "u001", "ü": [1, 2]}
    expected = hashlib.sha256(
        f"check_quota:{json.dumps(payload, sort_keys=True, ensure_ascii=False)}".encode()
    ).hexdigest()[:16]
    assert task_id("check_quota", payload) == expected
    assert payload_text(payload) == json.dumps(payload, sort_keys=True, ensure_ascii=False)


def test_digest_ignores_key_order() -> None:
    assert digest({"a": 1, "b": 2}) == digest({"b": 2, "a": 1})
    assert digest({"a": 1}) != digest({"a": 1.0})


@pytest.mark.parametrize(
    "event",
    [
        ("t", "running", 1, None, "i" * 64, None),
        ("t", "succeeded", 1, None, None, "o" * 64),
        ('tä"sk', "failed", 2, {"type": "ValueError", "message": 'bad "value" é'}, None, None),
        ("skip-me", "skipped", 0, None, None, None),
    ],
)
def test_event_canonical_text_is_its_canonical_json(event: tuple[object, ...]) -> None:
    from harness_tui.engine.events import Status, TraceEvent

    task, status, attempt, error, input_digest, output_digest = event
    trace_event = TraceEvent(
        7, task, "abcd", Status(status), attempt, error, input_digest, output_digest, 1.0, 2.0
    )  # type: ignore[arg-type]
    assert trace_event.canonical_text() == check_json(trace_event.canonical())
