"""The one sanitiser for untrusted text on its way to a terminal, for every front end.

Task names, error messages, logs, payload values, workflow fields and file names come from
workflows, exports and user code, and exports travel in bug reports. Written raw, an escape
sequence in one of them could clear the screen, retitle the window, write the clipboard
(OSC 52), or hide text (bidi overrides); a 1 MB value would bury the one line that matters.
Here every control character becomes a visible escape (``\\x1b``, ``\\u202e``) and long
values are shortened with a marker saying how much was left out. Standard library only, so
the CLI, the TUI and the error messages of every layer share it; the TUI's
:func:`harness_tui.tui.sanitize.inert` wraps it into Rich text that is never parsed as markup.
"""

from __future__ import annotations

import re

__all__ = ["LIMIT", "json_visible", "quoted", "shorten", "shown", "terminal_text", "visible"]

# C0 and C1 controls, DEL, bidi embeddings, overrides, isolates and marks, and the line and
# paragraph separators, which some terminals treat as line breaks.
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
# The same, but line feeds and tabs: our own layout in a whole text we print.
_UNSAFE_IN_LAYOUT = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
# What JSON text may still carry raw after ``json.dumps(..., ensure_ascii=False)``, which
# escapes C0 controls only.
_UNSAFE_IN_JSON = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

LIMIT = 200
"""How many characters of one untrusted value a one-line message shows."""


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control character replaced by a visible escape.

    Args:
        text: untrusted text.
        multiline: keep line breaks (``\\r\\n`` becomes ``\\n``) and expand tabs; otherwise
            the result is one line, with ``\\n`` shown as the two characters ``\\n``.

    Returns:
        Text that moves no cursor and changes no terminal state when written.
    """
    if text.isprintable():
        return text
    if not multiline:
        return _UNSAFE.sub(_escape, text)
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(_UNSAFE.sub(_escape, line.expandtabs(8)) for line in lines)


def shorten(text: str, limit: int = LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def shown(value: object, limit: int = LIMIT) -> str:
    """An untrusted value for a one-line message: shortened, then made :func:`visible`."""
    return visible(shorten(str(value), limit))


def quoted(value: object, limit: int = LIMIT) -> str:
    """Like ``f"{value!r}"`` for a name or key in a message, but shortened: ``'name'``."""
    if isinstance(value, str):
        return f"'{shown(value, limit)}'"
    return shown(repr(value), limit)


def terminal_text(text: str) -> str:
    """A whole text of ours about to be printed, which may embed untrusted values: every
    control character but line feeds and tabs (our layout) made visible. The last line of
    defence; single values should already have gone through :func:`shown`."""
    if text.isprintable():
        return text
    return _UNSAFE_IN_LAYOUT.sub(_escape, text)


def json_visible(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with the controls JSON leaves raw (DEL, C1, bidi)
    written as ``\\uXXXX`` escapes: the same JSON value, and nothing a terminal obeys."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
