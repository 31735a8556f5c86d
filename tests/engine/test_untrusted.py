"""The shared sanitiser's helpers: shortening with a marker, quoting, whole texts and JSON."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from harness_tui.engine.untrusted import (
    LIMIT,
    json_visible,
    quoted,
    shorten,
    shown,
    terminal_text,
    visible,
)
from tests.hostile.corpus import OBEYED


def test_a_long_value_is_shortened_with_a_marker_saying_how_much() -> None:
    assert shorten("x" * 10, 10) == "x" * 10
    assert shorten("x" * 1_000_000, 10) == "x" * 10 + "… [999,990 more characters]"
    assert shown("\x1b]0;t\x07" + "y" * 500).startswith("\\x1b]0;t\\x07yyy")
    assert len(shown("z" * 1_000_000)) < LIMIT + 40


def test_quoted_is_like_repr_for_names_but_short_and_visible() -> None:
    assert quoted("fetch") == repr("fetch")
    assert quoted("a\x1b[2Jb") == "'a\\x1b[2Jb'"
    assert quoted(3) == "3"
    assert quoted("n" * 5_000).endswith("… [4,800 more characters]'")


def test_a_whole_text_keeps_our_line_breaks_and_tabs_only() -> None:
    assert terminal_text("a\tb\nc") == "a\tb\nc"
    shown_text = "a\\rb\\x1b]52;c;eA==\\x07\\x9b\\u202e"
    assert terminal_text("a\rb\x1b]52;c;eA==\x07\x9b\u202e") == shown_text


@given(st.recursive(st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_json_visible_is_the_same_json_value_with_nothing_a_terminal_obeys(value: object) -> None:
    text = json_visible(json.dumps(value, ensure_ascii=False, indent=2))
    assert json.loads(text) == value
    assert not OBEYED.search(text)


@given(st.text())
def test_visible_text_holds_nothing_a_terminal_obeys(text: str) -> None:
    assert not OBEYED.search(visible(text))
    assert not OBEYED.search(terminal_text(text))
