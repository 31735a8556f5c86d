"""Marker glyphs shared by the widgets (status glyphs are in :mod:`.looks`), and their ASCII
stand-ins for terminals and fonts that lack them (``glyphs = "ascii"`` in ``config.toml``).

Plain data, no Textual: the workbench applies :func:`to_ascii` to every line it draws (its
own glyphs, Textual's borders and scrollbars alike), the command line to what it prints.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

__all__ = ["ASCII", "BREAKPOINT", "NEXT", "RETRYING", "to_ascii"]

BREAKPOINT = "●"
NEXT = "▶"
RETRYING = "↻"  # a DAG box's status glyph between two attempts of its task

_NAMED = {
    # Task statuses (see .looks.STATUS_LOOKS): one cell each, told apart without colour.
    "✔": "v",
    "✘": "x",
    "◐": "~",
    "⏱": "T",
    "↺": "f",
    "⊘": "/",
    "⇣": "!",
    "■": "#",
    "·": ".",
    "↻": "r",
    # Markers, arrows and punctuation the widgets draw.
    "●": "*",
    "▶": ">",
    "▷": ">",
    "▸": ">",
    "▼": "v",
    "▲": "^",
    "◀": "<",
    "◆": "*",
    "→": ">",
    "←": "<",
    "↕": "|",
    "↑": "^",
    "↓": "v",
    "‹": "<",
    "›": ">",
    "⏪": "<",
    "…": "~",
    "•": "*",
}


def _box(char: str) -> str:
    """A box-drawing character's ASCII shape: a line, or a corner or join as ``+``."""
    name = unicodedata.name(char, "")
    if "HORIZONTAL" in name and "VERTICAL" not in name and " AND " not in name:
        return "-"
    if "VERTICAL" in name and "HORIZONTAL" not in name and " AND " not in name:
        return "|"
    if "DIAGONAL" in name:
        return "\\" if "UPPER LEFT" in name else "/"
    return "+"


def _block(char: str) -> str:
    """A block element's ASCII shape: thin edges as lines (the half-cell edges of Textual's
    borders, ``▁▔▎▊``), anything with body (bars, scrollbar thumbs, shades) as ``#``."""
    name = unicodedata.name(char, "")
    if name.startswith(("LOWER ONE EIGHTH", "LOWER ONE QUARTER")):
        return "_"
    if name.startswith(("UPPER ONE EIGHTH", "UPPER HALF")):
        return "-"
    if name.startswith(("LEFT", "RIGHT")) and "SEVEN" not in name:
        return "|"
    return "#"


def _table() -> dict[int, str]:
    table = {ord(char): _box(char) for char in map(chr, range(0x2500, 0x2580))}
    table |= {ord(char): _block(char) for char in map(chr, range(0x2580, 0x25A0))}
    table |= {ord(char): ascii_char for char, ascii_char in _NAMED.items()}
    return table


ASCII: Mapping[int, str] = _table()
"""Code point -> its one-character ASCII stand-in (a ``str.translate`` table)."""


def to_ascii(text: str) -> str:
    """``text`` with every glyph of :data:`ASCII` replaced; each keeps its one cell."""
    return text.translate(ASCII) if not text.isascii() else text
