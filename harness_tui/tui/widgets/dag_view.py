"""DagView: the workflow drawn as a layered graph, rendered one visible row at a time.

The layout itself is headless (:mod:`harness_tui.layout`): this widget picks the box mode for
its width, paints the rows on screen and keeps a legend on its bottom line(s).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...engine.diff import DiffKind
from ...engine.events import Status
from ...layout import (
    ARROW,
    FULL_NAME_WIDTH,
    DagLayout,
    Mode,
    NodeBox,
    Routing,
    box_text,
    fit_name_width,
    highlight,
    label,
    layout_height,
    layout_width,
    line_chars,
    line_masks,
    place_lazily,
)
from ..glyphs import BREAKPOINT, NEXT, RETRYING
from ..looks import KIND_LOOKS, STATUS_LOOKS, component_classes, component_tcss, status_name

LEGEND_LINES = 2
"""At most this many rows of legend (one in panes under 14 rows, none under 4)."""


class DagView(ScrollView, can_focus=True):
    """A scrollable layered drawing of the DAG; arrows move the selection along edges."""

    # Status and diff-kind colours come from the looks tables; the rest is in app.tcss.
    DEFAULT_CSS = "\n".join(
        (
            component_tcss("DagView", "dag-view", STATUS_LOOKS),
            component_tcss("DagView", "dag-view", KIND_LOOKS),
        )
    )
    BINDINGS = [
        Binding("up", "move(0, -1)", "Up", show=False, id="dag-up"),
        Binding("down", "move(0, 1)", "Down", show=False, id="dag-down"),
        Binding("left", "move(-1, 0)", "To a dependency", show=False, id="dag-left"),
        Binding("right", "move(1, 0)", "To a dependent", show=False, id="dag-right"),
    ]
    COMPONENT_CLASSES = {
        "dag-view--edge",
        "dag-view--edge-lit",
        "dag-view--selected",
        "dag-view--lineage",
        "dag-view--breakpoint",
        "dag-view--next",
        "dag-view--legend",
        *component_classes("dag-view", STATUS_LOOKS),
        *component_classes("dag-view", KIND_LOOKS),
    }

    @dataclass
    class TaskSelected(Message):
        """The user picked a task in the drawing."""

        dag_view: DagView
        task: str

        @property
        def control(self) -> DagView:
            return self.dag_view

    selected: reactive[str | None] = reactive(None)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.routing: Routing | None = None
        self.layout_ = DagLayout()
        self.chosen_mode: Mode | None = None  # None: full if it fits, else compact
        self._depends_on: Mapping[str, Collection[str]] = {}
        self._dependents: Mapping[str, Collection[str]] = {}
        self.status_of: Callable[[str], Status | None] = lambda task: None
        self.retry_of: Callable[[str], object | None] = lambda task: None  # waits to retry
        self.breakpoints: Collection[str] = ()
        self.next_task: str | None = None
        self.marks: Mapping[str, DiffKind] = {}
        self._lineage: set[str] = set()
        self._lit = DagLayout()  # the lineage's runs, indexed like the layout's
        self._legend: list[list[tuple[str, str]]] = []

    def show(
        self,
        routing: Routing | None,
        depends_on: Mapping[str, Collection[str]],
        dependents: Mapping[str, Collection[str]],
    ) -> None:
        """Draw a new graph (``routing`` from :func:`harness_tui.layout.route_dag`)."""
        self.routing = routing
        self._depends_on = depends_on
        self._dependents = dependents
        self.layout_ = DagLayout()
        self._relayout()
        self.selected = None
        self._lineage = set()
        self._lit = DagLayout()
        self.refresh()

    @property
    def mode(self) -> Mode:
        """How boxes are drawn now."""
        return self.layout_.mode

    def toggle_mode(self) -> Mode:
        """Switch between compact and full boxes (the choice then sticks)."""
        self.chosen_mode = Mode.FULL if self.mode is Mode.COMPACT else Mode.COMPACT
        self._relayout()
        self.watch_selected(self.selected)
        return self.mode

    def _relayout(self) -> None:
        """Lay the routing out for the chosen mode (or the one that fits) and this width."""
        routing = self.routing
        self._legend = self._legend_items()
        available = self.scrollable_content_region.width or self.size.width
        if routing is None or not routing.position or available <= 0:
            layout = DagLayout()  # nothing to draw, or no size yet (the first resize places)
        else:
            rows = self.scrollable_content_region.height - self.legend_rows
            fits = (
                layout_width(routing, Mode.FULL, FULL_NAME_WIDTH) <= available
                and layout_height(routing, Mode.FULL) <= rows
            )
            mode = self.chosen_mode or (Mode.FULL if fits else Mode.COMPACT)
            names = FULL_NAME_WIDTH
            if mode is Mode.COMPACT:
                names = fit_name_width(routing, mode, available)
            placed = self.layout_
            if placed.layers and (mode, names) == (placed.mode, placed.name_width):
                return  # the same geometry: placed once per size
            # Only the layers and gaps on screen are placed (a 100,000-task graph has
            # some 2,000 layers, three of them in view); the rest as they scroll in.
            layout = place_lazily(routing, mode, names)
        self.layout_ = layout
        self._light()
        self._size_to_fit()

    def _size_to_fit(self) -> None:
        legend = len(self._legend_lines(self.size.width))
        self.virtual_size = Size(self.layout_.width, self.layout_.height + legend)

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()
        self._size_to_fit()
        self.reveal(self.selected)

    def watch_selected(self, task: str | None) -> None:
        self._light()
        if task in self._lineage:
            self.reveal(task)
        self.refresh()

    def _light(self) -> None:
        """Light up the selected task's lineage: its boxes, and the edges among them."""
        task = self.selected
        self._lineage = set()
        self._lit = DagLayout()
        if task is not None and task in self.layout_.boxes:
            upstream = self._walk(task, self._depends_on) | {task}
            downstream = self._walk(task, self._dependents) | {task}
            self._lineage = upstream | downstream
            self._lit = highlight(
                self.layout_,
                lambda edge: (
                    (edge.source in upstream and edge.target in upstream)
                    or (edge.source in downstream and edge.target in downstream)
                ),
            )

    def reveal(self, task: str | None) -> None:
        """Scroll so that ``task`` is on screen (without selecting it)."""
        box = self.layout_.boxes.get(task or "")
        if box is not None:
            # Taller by the legend's rows, so that the legend never covers the box.
            below = 1 + self.legend_rows
            region = Region(box.x - 2, box.y - 1, box.width + 4, box.height + 1 + below)
            self.scroll_to_region(region, animate=False, immediate=True)

    @staticmethod
    def _walk(start: str, links: Mapping[str, Collection[str]]) -> set[str]:
        seen: set[str] = set()
        stack = list(links.get(start, ()))
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(links.get(current, ()))
        return seen

    # -- input ------------------------------------------------------------------------------

    def select(self, task: str | None, *, notify: bool = True) -> None:
        """Select a task (and tell the screen unless ``notify`` is False)."""
        self.selected = task
        if notify and task is not None:
            self.post_message(self.TaskSelected(self, task))

    def action_move(self, dx: int, dy: int) -> None:
        boxes = self.layout_.boxes
        if not self.layout_.layers:
            return
        current = boxes.get(self.selected or "")
        if current is None:
            self.select(self.layout_.layers[0][0])
            return
        target: str | None = None
        if dy:
            layer = self.layout_.layers[current.layer]
            index = layer.index(current.task) + dy
            if 0 <= index < len(layer):
                target = layer[index]
        else:
            links = self._depends_on if dx < 0 else self._dependents
            candidates = [boxes[t] for t in links.get(current.task, ()) if t in boxes]
            if candidates:
                target = min(candidates, key=lambda b: (abs(b.y - current.y), b.y)).task
        if target is not None:
            self.select(target)

    def on_click(self, event: events.Click) -> None:
        x = event.x + int(self.scroll_offset.x)
        y = event.y + int(self.scroll_offset.y)
        box = self.layout_.box_at(x, y)
        if box is not None:
            self.select(box.task)

    # -- drawing ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        legend = self._legend_lines(width)
        index = y - (self.scrollable_content_region.height - len(legend))
        if 0 <= index < len(legend):
            return self._legend_strip(legend[index], width, base)
        scroll_x, scroll_y = self.scroll_offset
        row = y + int(scroll_y)
        x0 = int(scroll_x)
        layout = self.layout_
        if row >= layout.height or width <= 0:
            return Strip.blank(width, base)
        chars = line_chars(layout, row, x0, width)
        lit = [mask != 0 for mask in line_masks(self._lit, row, x0, width)]
        edge_style = base + self.get_component_rich_style("dag-view--edge")
        lit_style = base + self.get_component_rich_style("dag-view--edge-lit")
        styles: list[Style] = [lit_style if lit[i] else edge_style for i in range(width)]
        for box in layout.rows.get(row, ()):
            if box.right > x0 and box.x < x0 + width:
                self._paint_box(chars, styles, box, row - box.y, x0, base)
        return Strip(_segments(chars, styles), width)

    def _box_style(self, task: str, base: Style) -> Style:
        style = base + self.get_component_rich_style(
            f"dag-view--{status_name(self.status_of(task))}"
        )
        mark = self.marks.get(task)
        if mark:
            style += self.get_component_rich_style(f"dag-view--{mark}")
        for part, applies in (
            ("lineage", task in self._lineage),
            ("next", task == self.next_task),
            ("selected", task == self.selected),
        ):
            if applies:
                style += self.get_component_rich_style(f"dag-view--{part}")
        return style

    def _paint_box(
        self, chars: list[str], styles: list[Style], box: NodeBox, line: int, x0: int, base: Style
    ) -> None:
        task = box.task
        breakpoint_ = task in self.breakpoints
        lead = BREAKPOINT if breakpoint_ else NEXT if task == self.next_task else " "
        status = self.status_of(task)
        retrying = status in (Status.FAILED, Status.TIMED_OUT) and self.retry_of(task) is not None
        glyph = RETRYING if retrying else STATUS_LOOKS[status].glyph
        layout = self.layout_
        text = box_text(
            box, line, label(task, lead, glyph, layout.name_width, layout.mode), layout.mode
        )
        style = self._box_style(task, base)
        # The marker cell: its own column inside the box, never a border or an arrow.
        marker = 1 if line == box.height // 2 else -1
        marker_style = base + self.get_component_rich_style("dag-view--breakpoint")
        width = len(chars)
        for i, char in enumerate(text):
            x = box.x + i - x0
            if 0 <= x < width:
                chars[x] = char
                styles[x] = marker_style if (i == marker and breakpoint_) else style

    # -- legend -----------------------------------------------------------------------------

    def _legend_items(self) -> list[list[tuple[str, str]]]:
        """Legend entries: each a list of ``(text, component class)`` parts."""
        items: list[list[tuple[str, str]]] = []
        if self.marks:
            items.extend([(kind.value, f"dag-view--{kind.value}")] for kind in KIND_LOOKS)
        items.append([(NEXT, "dag-view--next"), (" next", "dag-view--legend")])
        items.append([(BREAKPOINT, "dag-view--breakpoint"), (" breakpoint", "dag-view--legend")])
        for status, look in STATUS_LOOKS.items():
            name = status_name(status)
            items.append(
                [(look.glyph, f"dag-view--{name}"), (f" {look.label}", "dag-view--legend")]
            )
        items.append([(f"─{ARROW}", "dag-view--edge"), (" feeds", "dag-view--legend")])
        items.append([("┼", "dag-view--edge"), (" crossing", "dag-view--legend")])
        return items

    @property
    def legend_rows(self) -> int:
        """How many of the pane's bottom rows the legend takes."""
        return len(self._legend_lines(self.scrollable_content_region.width))

    def _legend_lines(self, width: int) -> list[list[list[tuple[str, str]]]]:
        """The legend wrapped to ``width``, at most :data:`LEGEND_LINES` lines."""
        height = self.scrollable_content_region.height
        if width <= 0 or height < 4 or self.routing is None or not self.routing.position:
            return []
        most = LEGEND_LINES if height >= 14 else 1
        lines: list[list[list[tuple[str, str]]]] = [[]]
        used = 0
        for item in self._legend:
            size = sum(len(text) for text, _ in item) + 2
            if used + size > width and lines[-1]:
                if len(lines) == most:
                    break
                lines.append([])
                used = 0
            lines[-1].append(item)
            used += size
        return lines

    def _legend_strip(self, items: list[list[tuple[str, str]]], width: int, base: Style) -> Strip:
        segments = []
        for item in items:
            for text, part in item:
                segments.append(Segment(text, base + self.get_component_rich_style(part)))
            segments.append(Segment("  ", base))
        return Strip(segments).crop_extend(0, width, base)


def _segments(chars: list[str], styles: list[Style]) -> list[Segment]:
    """Join runs of equal style into segments."""
    segments: list[Segment] = []
    if not chars:
        return segments
    run_start = 0
    for i in range(1, len(chars) + 1):
        if i == len(chars) or styles[i] != styles[run_start]:
            segments.append(Segment("".join(chars[run_start:i]), styles[run_start]))
            run_start = i
    return segments
