"""Phase 5: drawing. Line cells as box-drawing characters, box text, and the whole picture
as plain text (for tests and for reports that are not a terminal)."""

from __future__ import annotations

from collections.abc import Callable

from .model import ARROW, BOX, DOWN, LEFT, RIGHT, UP, DagLayout, Mode, NodeBox

__all__ = ["box_text", "cut", "label", "line_chars", "line_masks", "text_grid"]


def line_masks(layout: DagLayout, row: int, x0: int, width: int) -> list[int]:
    """The connection mask of each cell of ``row`` from column ``x0`` (``width`` cells)."""
    masks = [0] * width
    end = x0 + width - 1
    layout.ensure(x0, end)
    for start, stop in layout.horizontal.get(row, ()):
        for x in range(max(start, x0), min(stop, end) + 1):
            masks[x - x0] |= (LEFT if x > start else 0) | (RIGHT if x < stop else 0)
    for x, top, bottom in layout.vertical_at(row):
        if x0 <= x <= end:
            masks[x - x0] |= (UP if row > top else 0) | (DOWN if row < bottom else 0)
    return masks


def line_chars(layout: DagLayout, row: int, x0: int, width: int) -> list[str]:
    """The edge characters of ``row`` (spaces where there is no line, boxes left blank)."""
    chars = [BOX[m] if m else " " for m in line_masks(layout, row, x0, width)]
    for x in layout.arrows.get(row, ()):
        if x0 <= x < x0 + width:
            chars[x - x0] = ARROW
    return chars


def label(name: str, lead: str, glyph: str, name_width: int, mode: Mode) -> str:
    """A box's text: a marker cell (``lead``: breakpoint, next task or a space), the status
    glyph and the name (cut to ``name_width`` with ``…``). Full mode puts the marker first and
    a space before the name; compact mode puts the marker between glyph and name."""
    name = cut(name, name_width)
    return f"{lead}{glyph} {name}" if mode is Mode.FULL else f"{glyph}{lead}{name}"


def cut(name: str, width: int) -> str:
    """``name`` in at most ``width`` cells: a long one keeps its start and, after ``…``, its
    last third (names in one workflow often differ only at the end: ``transform_p01``)."""
    if len(name) <= width:
        return name
    tail = (width - 1) // 3
    return name[: width - 1 - tail] + "…" + name[len(name) - tail :]


def box_text(box: NodeBox, line: int, text: str, mode: Mode) -> str:
    """Line ``line`` of ``box`` (0 is the top), given its :func:`label` ``text``."""
    if mode is Mode.COMPACT:
        return text.ljust(box.width)
    inner = box.width - 2
    if line == 0:
        return "╭" + "─" * inner + "╮"
    if line == box.height - 1:
        return "╰" + "─" * inner + "╯"
    return "│" + text.ljust(inner) + "│"


def text_grid(
    layout: DagLayout, decorate: Callable[[str], tuple[str, str]] = lambda task: (" ", "·")
) -> list[str]:
    """The whole drawing as lines of text; ``decorate(task)`` gives its lead cell and glyph."""
    layout.ensure(0, layout.width)
    lines = []
    for row in range(layout.height):
        chars = line_chars(layout, row, 0, layout.width)
        for box in layout.rows.get(row, ()):
            lead, glyph = decorate(box.task)
            text = label(box.task, lead, glyph, layout.name_width, layout.mode)
            for i, char in enumerate(box_text(box, row - box.y, text, layout.mode)):
                chars[box.x + i] = char
        lines.append("".join(chars).rstrip())
    return lines
