"""Inspector: a task's spec, inputs, output, error and timings as foldable, highlighted JSON."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

MAX_CHILDREN = 200
MAX_STRING = 400


class Inspector(Tree[Any]):
    """A JSON tree; :meth:`show` replaces its content with labelled sections."""

    COMPONENT_CLASSES = {
        "inspector--key",
        "inspector--string",
        "inspector--number",
        "inspector--literal",
        "inspector--section",
        "inspector--error",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("inspector", id=id)
        self.show_root = False
        self.guide_depth = 3
        self._shown: tuple[str, list[tuple[str, Any]], bool] | None = None

    def show(self, title: str, sections: list[tuple[str, Any]], *, open_all: bool = False) -> None:
        """Show ``sections`` (name, JSON value) under a title (a no-op if nothing changed:
        rebuilding a tree costs a relayout)."""
        if (title, sections, open_all) == self._shown:
            return
        self._shown = (title, sections, open_all)
        self.clear()
        self.root.set_label(Text(title))
        for name, value in sections:
            style = "inspector--error" if name in ("error", "traceback") else "inspector--section"
            label = Text(name, style=self.get_component_rich_style(style))
            # Tracebacks are long; they open on demand.
            node = self.root.add(label, data=value, expand=name != "traceback")
            self._fill(node, value, depth=0, open_all=open_all)
        self.root.expand()

    def _fill(self, node: TreeNode[Any], value: Any, depth: int, open_all: bool) -> None:
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            node.add_leaf(self._scalar(value), data=value)
            return
        for key, item in items[:MAX_CHILDREN]:
            label = Text.assemble((str(key), self.get_component_rich_style("inspector--key")))
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
            text = shown if "\n" in shown else json.dumps(shown, ensure_ascii=False)
            return Text(text, style=self.get_component_rich_style("inspector--string"))
        if isinstance(value, bool) or value is None:
            literal = json.dumps(value)
            return Text(literal, style=self.get_component_rich_style("inspector--literal"))
        return Text(str(value), style=self.get_component_rich_style("inspector--number"))
