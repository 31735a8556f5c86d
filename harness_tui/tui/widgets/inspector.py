"""Inspector: a task's spec, inputs, output, error and timings as foldable, highlighted JSON.

Every string in it comes from a workflow, a payload or user code, so each label goes through
the sanitiser. A failure's full message and traceback open in :class:`TracebackModal`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ..actions import INSPECTOR, bindings
from ..call_text import diff_text
from ..inspection import CallsShown
from ..modals.traceback import TracebackModal
from ..sanitize import inert, visible

MAX_CHILDREN = 200
MAX_STRING = 400
FAILURE_SECTIONS = ("error", "divergence", "traceback")
"""Sections about a failure: Enter on them opens the full view instead of folding."""


class Inspector(Tree[Any]):
    """A JSON tree; :meth:`show` replaces its content with labelled sections."""

    ACTIONS = INSPECTOR
    BINDINGS = bindings(ACTIONS)
    COMPONENT_CLASSES = {
        "inspector--key",
        "inspector--string",
        "inspector--number",
        "inspector--literal",
        "inspector--section",
        "inspector--error",
    }

    @dataclass
    class CallsWanted(Message):
        """Enter on the ``calls`` section: open the calls view of ``task``'s ``attempt`` at
        call ``seq``."""

        task: str
        attempt: int
        seq: int | None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("inspector", id=id)
        self.show_root = False
        self.guide_depth = 3
        self._shown: tuple[str, list[tuple[str, Any]], bool] | None = None
        self._failure_nodes: set[int] = set()
        self._calls_nodes: dict[int, CallsShown] = {}  # node id -> the calls it lists

    def show(self, title: str, sections: list[tuple[str, Any]], *, open_all: bool = False) -> None:
        """Show ``sections`` (name, JSON value) under a title (a no-op if nothing changed:
        rebuilding a tree costs a relayout)."""
        if (title, sections, open_all) == self._shown:
            return
        self._shown = (title, sections, open_all)
        self.clear()
        self._failure_nodes.clear()
        self._calls_nodes.clear()
        self.root.set_label(inert(title))
        for name, value in sections:
            if isinstance(value, CallsShown):
                self._fill_calls(value)
                continue
            failure = name in FAILURE_SECTIONS
            style = "inspector--error" if failure else "inspector--section"
            label = Text(name, style=self.get_component_rich_style(style))
            if failure:
                label.append("  enter: full view", style="dim")
            # Tracebacks are long; they open on demand.
            node = self.root.add(label, data=value, expand=name != "traceback")
            if failure:
                self._failure_nodes.add(node.id)
            if name == "traceback" and isinstance(value, str):
                self._fill_lines(node, value)
            else:
                self._fill(node, value, depth=0, open_all=open_all)
        self.root.expand()

    def failure(self) -> tuple[Mapping[str, str] | None, str | None]:
        """The error (``{"type", "message"}``) and traceback of what is shown, if it failed;
        a diverged attempt's field diff goes before its traceback."""
        shown = dict(self._shown[1]) if self._shown else {}
        error, traceback = shown.get("error"), shown.get("traceback")
        traceback = traceback if isinstance(traceback, str) else None
        divergence = shown.get("divergence")
        if isinstance(divergence, list) and divergence:
            diff = "How the request differs from the nearest recorded one:\n" + diff_text(
                divergence
            )
            traceback = diff if traceback is None else f"{diff}\n\n{traceback}"
        return (error if isinstance(error, Mapping) else None, traceback)

    def action_show_traceback(self) -> None:
        """Open the full error message and traceback of what is shown, or say why not."""
        error, traceback = self.failure()
        if error is None and traceback is None:
            self.notify(
                "nothing failed here: select a failed task, or a failed event in the trace",
                severity="warning",
            )
            return
        title = self._shown[0] if self._shown else ""
        self.app.push_screen(TracebackModal(title, error, traceback))

    def action_select_cursor(self) -> None:
        # Enter on an error or a traceback opens the full view; elsewhere it folds, as usual.
        node = self.cursor_node
        while node is not None and node.parent is not None and node.parent is not self.root:
            node = node.parent
        if node is not None and node.id in self._failure_nodes:
            self.action_show_traceback()
        elif node is not None and node.id in self._calls_nodes:
            chosen = self.cursor_node
            seq = chosen.data if chosen is not None and isinstance(chosen.data, int) else None
            calls = self._calls_nodes[node.id]
            self.post_message(self.CallsWanted(calls.task, calls.attempt, seq))
        else:
            super().action_select_cursor()

    def _fill_calls(self, shown: CallsShown) -> None:
        """One leaf per call (its summary line); Enter opens the calls view there."""
        label = Text("calls", style=self.get_component_rich_style("inspector--section"))
        count = f"{shown.count} call{'s' if shown.count != 1 else ''}"
        label.append(f" · attempt {shown.attempt} · {count}  enter: calls view", style="dim")
        node = self.root.add(label, data=None, expand=True)
        self._calls_nodes[node.id] = shown
        for seq, line in shown.lines:
            node.add_leaf(Text(line), data=seq)  # summary_line made it visible
        if shown.count > len(shown.lines):
            more = shown.count - len(shown.lines)
            node.add_leaf(
                Text(f"… {more} more (enter: the calls view lists them all)", style="dim")
            )

    def _fill_lines(self, node: TreeNode[Any], text: str) -> None:
        """One leaf per line: a tree label shows a single line."""
        lines = visible(text.rstrip("\n"), multiline=True).split("\n")
        style = self.get_component_rich_style("inspector--string")
        for line in lines[:MAX_CHILDREN]:
            node.add_leaf(Text(line, style=style))
        if len(lines) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(lines) - MAX_CHILDREN} more lines (enter)", style="dim"))

    def _fill(self, node: TreeNode[Any], value: Any, depth: int, open_all: bool) -> None:
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            node.add_leaf(self._scalar(value), data=value)
            return
        for key, item in items[:MAX_CHILDREN]:
            # The key's style on the key only: the value appended after it keeps its own.
            key_style = self.get_component_rich_style("inspector--key")
            label = Text.assemble((visible(str(key)), key_style))
            if isinstance(item, dict | list):
                size = len(item)
                label.append(f" {'{…}' if isinstance(item, dict) else '[…]'} {size}", style="dim")
                child = node.add(label, data=item, expand=open_all or depth < 1)
                self._fill(child, item, depth + 1, open_all)
            else:
                label.append(": ")
                label.append_text(self._scalar(item))
                node.add_leaf(label, data=item)
        if len(items) > MAX_CHILDREN:
            node.add_leaf(Text(f"… {len(items) - MAX_CHILDREN} more", style="dim"))

    def _scalar(self, value: Any) -> Text:
        if isinstance(value, str):
            shown = value if len(value) <= MAX_STRING else value[:MAX_STRING] + "…"
            # JSON on one line: a tree label shows one line, and line breaks stay visible.
            text = json.dumps(shown, ensure_ascii=False)
            return inert(text, self.get_component_rich_style("inspector--string"))
        if isinstance(value, bool) or value is None:
            literal = json.dumps(value)
            return Text(literal, style=self.get_component_rich_style("inspector--literal"))
        return Text(str(value), style=self.get_component_rich_style("inspector--number"))
