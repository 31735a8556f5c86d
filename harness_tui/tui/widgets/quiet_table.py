"""QuietTable: a DataTable whose cursor can be moved by the program without announcing it."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable


class QuietTable(DataTable[str | Text]):
    """Moves made with :meth:`move_quietly` do not reach :meth:`on_user_row`."""

    def __init__(self, *, id: str | None = None, zebra_stripes: bool = False) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=zebra_stripes)
        self._expected: set[int] = set()

    def move_quietly(self, row: int) -> None:
        """Put the cursor on ``row`` (the highlight that follows is not the user's)."""
        if 0 <= row < self.row_count and row != self.cursor_row:
            self._expected.add(row)
            self.move_cursor(row=row, scroll=True)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.cursor_row in self._expected:
            self._expected.discard(event.cursor_row)
            return
        # Rows added under the cursor also highlight; only a focused table hears the user.
        if self.has_focus and event.row_key.value is not None:
            self.on_user_row(event.row_key.value)

    def on_user_row(self, key: str) -> None:
        """The user moved to the row with this key."""
