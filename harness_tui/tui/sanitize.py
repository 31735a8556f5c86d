"""The one sanitiser for untrusted text on its way to a terminal.

Task names, error messages, tracebacks, payload values and file names come from workflows,
exports and user code. Written raw, an escape sequence in one of them could clear the screen,
retitle the window or hide text (bidi overrides); passed as a ``str`` to a widget, ``[red]``
would be parsed as markup. Here every control character becomes a visible escape (``\\x1b``,
``\\u202e``) and the result is a :class:`rich.text.Text`, which is never parsed as markup.
"""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text

__all__ = ["inert", "visible"]

# C0 and C1 controls, DEL, bidi embeddings, overrides, isolates and marks, and the line and
# paragraph separators, which some terminals treat as line breaks.
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


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


def inert(text: str, style: str | Style = "", *, multiline: bool = False) -> Text:
    """Untrusted ``text`` made visible (:func:`visible`) as a Rich ``Text``: shown as written,
    never parsed as markup.

    Args:
        text: untrusted text.
        style: a Rich style for all of it (our own literal, never from the text).
        multiline: keep line breaks (see :func:`visible`).
    """
    return Text(visible(text, multiline=multiline), style=style)
