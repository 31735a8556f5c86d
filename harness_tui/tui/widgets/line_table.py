"""LineTable: a fast, read-only table drawn with the line API.

Rows are not stored: a subclass answers :meth:`cells` for a row index when the row scrolls into
view, so appending a row costs O(1) and a status change is one ``refresh()`` of the visible
lines. (Textual's DataTable re-renders every visible cell through Rich on each update, which
was 0.3 ms a cell and too slow for a live trace.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

MIN_FLEXIBLE = 8
"""The narrowest a column without a fixed width gets (it scrolls into view when narrower)."""

Cell = tuple[str, str]
"""Text and a Rich style string ("" for the default)."""


@dataclass(frozen=True, slots=True)
class Column:
    """A column: key, header label, width in cells (None: takes the remaining width)."""

    key: str
    label: str
    width: int | None = None


def _fit(text: str, width: int) -> str:
    """Pad or cut ``text`` to exactly ``width`` cells."""
    length = cell_len(text)
    if length <= width:
        return text + " " * (width - length)
    cut = text
    while cell_len(cut) > max(width - 1, 0):
        cut = cut[:-1]
    return cut + "…" if width else ""


class LineTable(ScrollView, can_focus=True):
    """A header line plus rows; a row cursor moved by keys or clicks."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False, id="table-up"),
        Binding("down", "cursor(1)", "Down", show=False, id="table-down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table-page-up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table-page-down"),
        Binding("home", "jump(0)", "First row", show=False, id="table-first"),
        Binding("end", "jump(-1)", "Last row", show=False, id="table-last"),
    ]
    COMPONENT_CLASSES = {"line-table--header", "line-table--cursor", "line-table--stripe"}
    DEFAULT_CSS = """
    LineTable { background: $surface; }
    LineTable > .line-table--header { text-style: bold; background: $panel; }
    LineTable > .line-table--cursor { background: $primary 40%; }
    LineTable:focus > .line-table--cursor { background: $primary 70%; text-style: bold; }
    LineTable > .line-table--stripe { background: $foreground 4%; }
    """

    @dataclass
    class RowHighlighted(Message):
        """The user moved the cursor to ``row``."""

        table: LineTable
        row: int

        @property
        def control(self) -> LineTable:
            return self.table

    def __init__(
        self, columns: Sequence[Column], *, id: str | None = None, stripes: bool = False
    ) -> None:
        super().__init__(id=id)
        self.columns = list(columns)
        self.row_count = 0
        self.cursor_row = 0
        self.stripes = stripes

    # -- to override -----------------------------------------------------------------------

    def cells(self, row: int) -> Sequence[Cell]:
        """The cells of one row, one per column."""
        raise NotImplementedError

    def on_user_row(self, row: int) -> None:
        """The user moved the cursor (default: post :class:`RowHighlighted`)."""
        self.post_message(self.RowHighlighted(self, row))

    # -- rows and cursor -------------------------------------------------------------------

    def set_row_count(self, count: int) -> None:
        """Declare how many rows there are (rows are drawn on demand)."""
        self.row_count = count
        self.cursor_row = min(self.cursor_row, max(count - 1, 0))
        self._resize_virtual(Size(self._content_width(), count + 1))

    def _resize_virtual(self, size: Size) -> None:
        """Change the scrollable size without relaying out the screen when we can.

        Setting ``virtual_size`` asks for a layout of the whole screen (70 ms with a 2,000-row
        plan beside us), once per appended trace row. Only a scrollbar appearing or vanishing
        changes our layout; otherwise updating the scroll range and repainting is enough.
        """
        if size == self.virtual_size:
            self.refresh()
            return
        before = (self.show_horizontal_scrollbar, self.show_vertical_scrollbar)
        self.set_reactive(LineTable.virtual_size, size)
        self._scroll_update(size)  # Textual's own scrollbar update (private, stable since 0.x)
        after = (self.show_horizontal_scrollbar, self.show_vertical_scrollbar)
        self.refresh(layout=before != after)

    def fit_column(self, key: str, texts: Sequence[str], cap: int = 28) -> None:
        """Size a column to its longest text (at most ``cap``), so columns to its right stay
        aligned and reachable by scrolling."""
        index = [c.key for c in self.columns].index(key)
        column = self.columns[index]
        width = min(max([cell_len(t) for t in texts] + [cell_len(column.label), 4]), cap)
        self.columns[index] = Column(column.key, column.label, width)

    def cell_text(self, row: int, key: str) -> str:
        """The text of one cell (for tests and tooling)."""
        index = [c.key for c in self.columns].index(key)
        return self.cells(row)[index][0]

    def move_cursor(self, row: int, *, user: bool = False) -> None:
        """Put the cursor on ``row`` and keep it visible; tell the screen only if ``user``."""
        if not self.row_count:
            return
        row = max(0, min(row, self.row_count - 1))
        changed = row != self.cursor_row
        self.cursor_row = row
        self.scroll_to_region(Region(0, row + 1, 1, 1), animate=False, spacing=None, top=False)
        self._keep_below_header(row)
        self.refresh()
        if user and changed:
            self.on_user_row(row)

    def _keep_below_header(self, row: int) -> None:
        # Row r is drawn on screen line r + 1 - scroll_y; line 0 is the header.
        if row < self.scroll_offset.y:
            self.scroll_to(y=row, animate=False)

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta, user=True)

    def action_page(self, direction: int) -> None:
        page = max(self.scrollable_content_region.height - 2, 1)
        self.move_cursor(self.cursor_row + direction * page, user=True)

    def action_jump(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else self.row_count - 1, user=True)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(int(self.scroll_offset.y) + event.y - 1, user=True)

    # -- drawing ---------------------------------------------------------------------------

    def _widths(self) -> list[int]:
        fixed = sum(c.width or 0 for c in self.columns) + len(self.columns)
        flexible = [c for c in self.columns if c.width is None]
        room = max(self.scrollable_content_region.width - fixed, MIN_FLEXIBLE * len(flexible))
        share = room // len(flexible) if flexible else 0
        return [c.width if c.width is not None else share for c in self.columns]

    def _content_width(self) -> int:
        # Flexible columns count at their minimum: they fill what is visible, and a width taken
        # from the visible region would outgrow it as soon as a vertical scrollbar appears,
        # bringing a horizontal scrollbar with nothing to scroll to.
        widths = [c.width if c.width is not None else MIN_FLEXIBLE for c in self.columns]
        return sum(widths) + len(self.columns)

    def on_resize(self) -> None:
        self.virtual_size = Size(self._content_width(), self.row_count + 1)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        widths = self._widths()
        if y == 0:
            style = base + self.get_component_rich_style("line-table--header")
            text = "".join(
                " " + _fit(c.label, w) for c, w in zip(self.columns, widths, strict=True)
            )
            return self._crop(Strip([Segment(text, style)]), width, style)
        row = int(self.scroll_offset.y) + y - 1
        if row >= self.row_count:
            return Strip.blank(width, base)
        line_style = base
        if row == self.cursor_row:
            line_style = base + self.get_component_rich_style("line-table--cursor")
        elif self.stripes and row % 2:
            line_style = base + self.get_component_rich_style("line-table--stripe")
        segments = []
        for (text, style_text), cell_width in zip(self.cells(row), widths, strict=True):
            cell_style = line_style + Style.parse(style_text) if style_text else line_style
            segments.append(Segment(" ", line_style))
            segments.append(Segment(_fit(text, cell_width), cell_style))
        return self._crop(Strip(segments), width, line_style)

    def _crop(self, strip: Strip, width: int, style: Style) -> Strip:
        x = int(self.scroll_offset.x)
        return strip.crop_extend(x, x + width, style)
