"""The matching key of a recorded request and the field-by-field difference."""

from __future__ import annotations

import json

import pytest

from harness_tui.engine.call_matching import (
    differences,
    field_changes,
    match_key,
    nearest,
    parse_volatile,
    redact_url,
)


def _key(body: object, volatile: tuple[str, ...] = ()) -> tuple[str, str, str]:
    steps = [parse_volatile(p) for p in volatile]
    return match_key("post", "http://127.0.0.1:1/v1", json.dumps(body).encode(), steps)


def test_key_order_and_spacing_do_not_matter() -> None:
    assert _key({"a": 1, "b": [1, 2]}) == match_key(
        "POST", "http://127.0.0.1:1/v1", b'{ "b": [1,2],  "a": 1 }'
    )


@pytest.mark.parametrize(
    ("path", "body", "other"),
    [
        ("$.metadata.id", {"metadata": {"id": 1}, "q": 1}, {"metadata": {"id": 2}, "q": 1}),
        (
            "$.messages[*].id",
            {"messages": [{"id": 1, "c": "x"}]},
            {"messages": [{"id": 9, "c": "x"}]},
        ),
        ('$["odd key"]', {"odd key": 1, "q": 1}, {"odd key": 2, "q": 1}),
    ],
)
def test_volatile_paths_leave_matching(path: str, body: object, other: object) -> None:
    assert _key(body, (path,)) == _key(other, (path,))
    assert _key(body) != _key(other)


@pytest.mark.parametrize("path", ["metadata.id", "$", "$.a..b", "$.a[x]"])
def test_a_volatile_path_that_cannot_be_read_is_one_line(path: str) -> None:
    with pytest.raises(ValueError, match="volatile path"):
        parse_volatile(path)


def test_differences_name_each_field() -> None:
    old = _key({"messages": [{"content": "hi"}, {"content": "a"}], "model": "m"})
    new = _key({"messages": [{"content": "hi"}, {"content": "b"}], "temperature": 1})
    assert differences(old, new, limit=5) == [
        "$.messages[1].content changed",
        "$.model removed",
        "$.temperature added",
    ]
    assert differences(old, ("GET", old[1], old[2])) == ["method POST -> GET"]
    assert differences(old, (old[0], old[1], "plain text")) == ["body changed"]


def test_field_changes_carry_both_values() -> None:
    old = _key({"messages": [{"content": "hi"}], "model": "m"})
    new = _key({"messages": [{"content": "hello"}], "stream": True})
    assert [(c.path, c.kind, c.recorded, c.sent) for c in field_changes(old, new)] == [
        ("$.messages[0].content", "changed", "hi", "hello"),
        ("$.model", "removed", "m", None),
        ("$.stream", "added", None, True),
    ]
    (url,) = field_changes(old, (old[0], "http://127.0.0.1:2/v1", old[2]))
    assert (url.path, url.recorded, url.sent) == ("url", old[1], "http://127.0.0.1:2/v1")


def test_the_nearest_recorded_request_shares_method_and_url_first() -> None:
    request = _key({"q": "new"})
    same_place = _key({"q": "old", "x": 1})
    elsewhere = ("POST", "http://127.0.0.1:1/other", request[2])
    assert nearest([elsewhere, same_place], request) == same_place
    assert nearest([], request) is None


def test_query_values_under_redacted_keys_are_replaced() -> None:
    url = "http://127.0.0.1:1/x?token=abc&q=1"
    assert redact_url(url, frozenset({"token"})) == "http://127.0.0.1:1/x?token=<redacted>&q=1"
    assert redact_url(url, frozenset({"other"})) == url
