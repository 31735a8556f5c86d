"""DagView: the workflow drawn as a layered graph, rendered one visible row at a time."""

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
from ..dag_layout import DOWN, LEFT, NODE_HEIGHT, NODE_WIDTH, RIGHT, UP, DagLayout, NodeBox
from ..glyphs import BREAKPOINT, NEXT
from ..looks import KIND_LOOKS, STATUS_LOOKS, component_classes, component_tcss, status_name

BOX = {
    UP | DOWN: "│", LEFT | RIGHT: "─", RIGHT | DOWN: "┌", LEFT | DOWN: "┐", RIGHT | UP: "└",
    LEFT | UP: "┘", LEFT | RIGHT | DOWN: "┬", LEFT | RIGHT | UP: "┴", UP | DOWN | RIGHT: "├",
    UP | DOWN | LEFT: "┤", UP | DOWN | LEFT | RIGHT: "┼", LEFT: "─", RIGHT: "─", UP: "│", DOWN: "│",
}  # fmt: skip


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
        self.layout_ = DagLayout()
        self._depends_on: Mapping[str, Collection[str]] = {}
        self._dependents: Mapping[str, Collection[str]] = {}
        self.status_of: Callable[[str], Status | None] = lambda task: None
        self.breakpoints: Collection[str] = ()
        self.next_task: str | None = None
        self.marks: Mapping[str, DiffKind] = {}
        self._lineage: set[str] = set()
        self._lit: list[tuple[str, int, int, int]] = []

    def show(
        self,
        layout: DagLayout,
        depends_on: Mapping[str, Collection[str]],
        dependents: Mapping[str, Collection[str]],
    ) -> None:
        """Draw a new graph."""
        self.layout_ = layout
        self._depends_on = depends_on
        self._dependents = dependents
        self.virtual_size = Size(layout.width + 1, layout.height)
        self.selected = None
        self._lineage = set()
        self._lit = []
        self.refresh()

    def watch_selected(self, task: str | None) -> None:
        self._lineage = set()
        self._lit = []
        if task is not None and task in self.layout_.boxes:
            upstream = self._walk(task, self._depends_on) | {task}
            downstream = self._walk(task, self._dependents) | {task}
            self._lineage = upstream | downstream
            for edge, pieces in self.layout_.pieces.items():
                if (edge.source in upstream and edge.target in upstream) or (
                    edge.source in downstream and edge.target in downstream
                ):
                    self._lit.extend(pieces)
            box = self.layout_.boxes[task]
            self.scroll_to_region(
                Region(box.x - 2, box.y - 1, NODE_WIDTH + 4, NODE_HEIGHT + 2), animate=False
            )
        self.refresh()

    def reveal(self, task: str | None) -> None:
        """Scroll so that ``task`` is on screen (without selecting it)."""
        box = self.layout_.boxes.get(task or "")
        if box is not None:
            region = Region(box.x - 2, box.y - 1, NODE_WIDTH + 4, NODE_HEIGHT + 2)
            self.scroll_to_region(region, animate=False)

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
        if not boxes:
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
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        row = y + int(scroll_y)
        x0 = int(scroll_x)
        base = self.rich_style
        layout = self.layout_
        if row >= layout.height or width <= 0:
            return Strip.blank(width, base)
        masks = [0] * width
        lit = [False] * width
        for start, end in layout.horizontal.get(row, ()):
            self._paint_h(masks, x0, width, start, end)
        for x, top, bottom in layout.vertical_at(row):
            if x0 <= x < x0 + width:
                masks[x - x0] |= (UP if row > top else 0) | (DOWN if row < bottom else 0)
        for kind, where, start, end in self._lit:
            if kind == "h" and where == row:
                for x in range(max(start, x0), min(end, x0 + width - 1) + 1):
                    lit[x - x0] = True
            elif kind == "v" and start <= row <= end and x0 <= where < x0 + width:
                lit[where - x0] = True
        chars = [BOX.get(m, " ") if m else " " for m in masks]
        for x in layout.arrows.get(row, ()):
            if x0 <= x < x0 + width:
                chars[x - x0] = "▶"
        edge_style = base + self.get_component_rich_style("dag-view--edge")
        lit_style = base + self.get_component_rich_style("dag-view--edge-lit")
        styles: list[Style] = [lit_style if lit[i] else edge_style for i in range(width)]
        for box in layout.rows.get(row, ()):
            if box.x + NODE_WIDTH > x0 and box.x < x0 + width:
                self._paint_box(chars, styles, box, row - box.y, x0, width, base)
        return Strip(_segments(chars, styles), width)

    @staticmethod
    def _paint_h(masks: list[int], x0: int, width: int, start: int, end: int) -> None:
        for x in range(max(start, x0), min(end, x0 + width - 1) + 1):
            masks[x - x0] |= (LEFT if x > start else 0) | (RIGHT if x < end else 0)

    def _paint_box(
        self, chars: list[str], styles: list[Style], box: NodeBox, line: int, x0: int,
        width: int, base: Style,
    ) -> None:  # fmt: skip
        task = box.task
        status = self.status_of(task)
        style = base + self.get_component_rich_style(f"dag-view--{status_name(status)}")
        mark = self.marks.get(task)
        if mark:
            style += self.get_component_rich_style(f"dag-view--{mark}")
        if task in self._lineage:
            style += self.get_component_rich_style("dag-view--lineage")
        if task == self.next_task:
            style += self.get_component_rich_style("dag-view--next")
        if task == self.selected:
            style += self.get_component_rich_style("dag-view--selected")
        inner = NODE_WIDTH - 2
        if line == 0:
            text = "╭" + "─" * inner + "╮"
        elif line == NODE_HEIGHT - 1:
            text = "╰" + "─" * inner + "╯"
        else:
            lead = NEXT if task == self.next_task else " "
            label = f"{lead}{STATUS_LOOKS[status].glyph} {task}"
            if len(label) > inner:
                label = label[: inner - 1] + "…"
            text = "│" + label.ljust(inner) + "│"
        breakpoint_style = None
        if line == 1 and task in self.breakpoints:
            text = BREAKPOINT + text[1:]
            breakpoint_style = base + self.get_component_rich_style("dag-view--breakpoint")
        for i, char in enumerate(text):
            x = box.x + i - x0
            if 0 <= x < width:
                chars[x] = char
                styles[x] = breakpoint_style if (i == 0 and breakpoint_style) else style


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
