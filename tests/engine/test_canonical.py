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


# -- each speed-tuned encoder equals the plain encoding ------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness_tui.engine.canonical import (  # noqa: E402
    combine_digests,
    event_text,
    object_text,
    plan_text,
    quote,
)
from harness_tui.engine.events import Status, TraceEvent  # noqa: E402
from harness_tui.engine.state import RunState  # noqa: E402

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
HEX = st.text("0123456789abcdef", min_size=16, max_size=16)
DIGEST = st.text("0123456789abcdef", min_size=64, max_size=64)
DIGESTS = st.none() | DIGEST
ERRORS = st.none() | st.fixed_dictionaries({"type": st.text(), "message": st.text()})


def plain(value: object) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


@given(JSON_VALUES)
def test_check_json_is_the_plain_encoding(value: object) -> None:
    assert check_json(value) == plain(value)


@given(st.text())
def test_quote_is_the_plain_string_encoding(text: str) -> None:
    assert quote(text) == json.dumps(text, ensure_ascii=False)


@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6))
def test_object_text_is_the_plain_encoding(items: dict[str, object]) -> None:
    assert object_text({k: check_json(v) for k, v in items.items()}) == plain(items)


@given(st.dictionaries(st.text(min_size=1, max_size=8), DIGEST, max_size=5))
def test_combine_digests_is_the_digest_of_the_plain_object(parts: dict[str, str]) -> None:
    assert combine_digests(parts) == digest(parts)


@given(
    st.integers(0, 10**6),
    st.text(min_size=1),
    HEX,
    st.sampled_from(list(Status)),
    st.integers(0, 99),
    ERRORS,
    DIGESTS,
    DIGESTS,
)
def test_event_text_is_the_plain_encoding(
    seq: int,
    task: str,
    task_id: str,
    status: Status,
    attempt: int,
    error: dict[str, str] | None,
    input_digest: str | None,
    output_digest: str | None,
) -> None:
    event = TraceEvent(seq, task, task_id, status, attempt, error, input_digest, output_digest)
    text = event_text(seq, task, task_id, status.value, attempt, error, input_digest, output_digest)
    assert text == event.canonical_text() == plain(event.canonical())


@given(st.lists(st.tuples(st.text(min_size=1), HEX, st.integers(0, 500)), max_size=20))
def test_plan_text_is_the_plain_encoding(rows: list[tuple[str, str, int]]) -> None:
    names = tuple(r[0] for r in rows)
    ids = tuple(r[1] for r in rows)
    levels = tuple(r[2] for r in rows)
    expected = [
        {"index": i, "level": level, "task": name, "task_id": task_id}
        for i, (name, task_id, level) in enumerate(rows)
    ]
    assert plan_text(names, ids, levels) == plain(expected)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=1, max_size=4))
def test_the_chunked_trace_digest_is_the_digest_of_the_plain_trace(cuts: list[int]) -> None:
    state = RunState()
    statuses = list(Status)
    total = 0
    for cut in cuts:  # digests asked for at arbitrary points, across 4,096-event chunks
        for seq in range(total, total + cut):
            state.append(TraceEvent(seq, f"t{seq % 7}", "0" * 16, statuses[seq % 8], seq % 3))
        total += cut
        assert state.trace_digest() == digest(state.canonical_trace())


SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("\ud800", "$"),
        ("é\udfff", "$"),
        ({"name": ["ok", "caf\udc80"]}, "$.name[1]"),
        ({"é": {"k\ud83d": 1}}, '$.é["k\\ud83d"]'),
        ([{"x": "\U0001f600"}, "\ud83d"], "$[1]"),
    ],
    ids=["alone", "after-non-ascii", "nested", "key", "after-valid-emoji"],
)
def test_text_that_is_not_valid_unicode_is_refused_by_path(value: object, path: str) -> None:
    with pytest.raises(CanonicalError) as caught:
        check_json(value)
    assert caught.value.path == path and caught.value.type_name == "str"
    assert "lone surrogate" in str(caught.value)
    str(caught.value).encode("utf-8")  # the message itself can be printed


@given(st.text(), st.text(), SURROGATES)
def test_a_lone_surrogate_anywhere_in_text_is_refused(head: str, tail: str, lone: str) -> None:
    assert check_json(head + tail) == plain(head + tail)
    with pytest.raises(CanonicalError, match="lone surrogate"):
        check_json({"items": [head + lone + tail]})
    with pytest.raises(CanonicalError, match="lone surrogate"):
        check_json(head + lone + tail)


from harness_tui.engine import canonical  # noqa: E402
from harness_tui.engine.canonical import canonical_chunks, digest_chunks  # noqa: E402

NOT_JSON = [
    (1, 2),
    {"a": {1, 2}},
    {"a": [1, b"x"]},
    {1: "one"},
    {"a": math.nan},
    [math.inf],
    {"my key": object()},
    {"name": ["ok", "caf\udc80"]},
    {"é": {"k\ud83d": 1}},
    [{"x": "\U0001f600"}, "\ud83d"],
    {"b": [1, {"c": [2, {"d": (3,)}]}], "a": [1]},
    {"trace": [{"seq": 0}, {"seq": 1}, {"seq": 2}, {"seq": (3,)}, {"seq": 4}]},
    {"results": {"a": 1, "b": 2, "c": {"d": math.inf}, "e": 5}},
    # runs of records (objects of scalars): encoded without the round trip, refused the same
    {"trace": [{"seq": 0}, {"seq": 1.5}, {"wall": math.nan}, {"seq": 3}]},
    {"trace": [{"task": "a"}, {"task": "b\ud800"}, {"task": "c"}]},
    {"results": {"a": {"v": 1}, "b": {"v": "\udc80"}, "c": {"v": 3}}},
    {"results": {"a": {"v": 1}, "b": {"v": -math.inf}}},
    {"trace": [{"seq": 0}, {"seq": True}, {"seq": [1]}, {"seq": (1,)}]},
]


@settings(max_examples=300)
@given(JSON_VALUES, st.integers(0, 4), st.sampled_from([1, 2, 3, 512]))
def test_canonical_chunks_join_to_the_canonical_text(value: object, depth: int, run: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(canonical, "_RUN", run)  # members encoded together, in runs this long
        chunks = list(canonical_chunks(value, depth=depth))
    assert "".join(chunks) == check_json(value) == plain(value)
    assert digest_chunks(iter(chunks)) == digest(value)


@pytest.mark.parametrize("value", NOT_JSON)
@pytest.mark.parametrize("depth", [1, 2, 5])
@pytest.mark.parametrize("run", [1, 2, 512])
def test_canonical_chunks_refuse_what_check_json_refuses_naming_the_same_path(
    value: object, depth: int, run: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(canonical, "_RUN", run)
    with pytest.raises(CanonicalError) as whole:
        check_json(value)
    with pytest.raises(CanonicalError) as chunked:
        "".join(canonical_chunks(value, depth=depth))
    assert str(chunked.value) == str(whole.value)
    assert (chunked.value.path, chunked.value.type_name) == (
        whole.value.path,
        whole.value.type_name,
    )
