"""The one sanitiser: untrusted text reaches the terminal visible and inert."""

from __future__ import annotations

import pytest
from rich.text import Text

from harness_tui.tui.sanitize import inert, visible


@pytest.mark.parametrize(
    ("raw", "one_line", "multiline"),
    [
        ("plain text, ünïcode ✔", "plain text, ünïcode ✔", "plain text, ünïcode ✔"),
        ("clear\x1b[2J", "clear\\x1b[2J", "clear\\x1b[2J"),
        ("title\x1b]0;pwned\x07", "title\\x1b]0;pwned\\x07", "title\\x1b]0;pwned\\x07"),
        ("csi\x9b31m del\x7f", "csi\\x9b31m del\\x7f", "csi\\x9b31m del\\x7f"),
        ("two\nlines", "two\\nlines", "two\nlines"),
        ("crlf\r\nend", "crlf\\r\\nend", "crlf\nend"),
        ("over\rwrite", "over\\rwrite", "over\\rwrite"),
        ("a\tb", "a\\tb", "a       b"),
        ("bidi \u202egnp.exe", "bidi \\u202egnp.exe", "bidi \\u202egnp.exe"),
        ("isolate \u2066x\u2069", "isolate \\u2066x\\u2069", "isolate \\u2066x\\u2069"),
        ("sep\u2028x", "sep\\u2028x", "sep\\u2028x"),
        ("nul\x00", "nul\\x00", "nul\\x00"),
    ],
)
def test_control_characters_become_visible_escapes(raw: str, one_line: str, multiline: str) -> None:
    assert visible(raw) == one_line
    assert visible(raw, multiline=True) == multiline


def test_inert_text_is_never_markup() -> None:
    text = inert("[red]markup[/] \x1b[1m", "bold")
    assert isinstance(text, Text)
    assert text.plain == "[red]markup[/] \\x1b[1m"
    assert [span.style for span in text.spans] == [] and text.style == "bold"
