"""OpenFileModal: pick a workflow file or a run export under the current folder."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from ...files import FileKind, file_kind
from ...workflow.python_source import is_python_ref
from ..sanitize import inert

PATTERNS = ("*.yaml", "*.yml", "*.json")
SKIP = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}


def candidates(root: Path, limit: int = 500) -> dict[Path, FileKind]:
    """Workflow files and exports under ``root`` (and ``root/workflows``), two levels deep,
    each with its kind as the one sniffer tells it (``.json`` files only when exports)."""
    found: dict[Path, FileKind] = {}
    for base in (root, root / "workflows"):
        if not base.is_dir():
            continue
        for pattern in PATTERNS:
            for depth in ("", "*/"):
                for path in base.glob(depth + pattern):
                    if SKIP.intersection(path.relative_to(root).parts) or not path.is_file():
                        continue
                    kind = file_kind(path)
                    if path.suffix == ".json" and kind is not FileKind.EXPORT:
                        continue
                    found[path] = kind
    ordered = sorted(found, key=lambda p: (found[p] is FileKind.EXPORT, str(p)))[:limit]
    return {path: found[path] for path in ordered}


class OpenFileModal(ModalScreen[Path | None]):
    """A filterable list of files; Enter opens, Escape cancels."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="modal-cancel")]

    def __init__(self, root: Path | None = None) -> None:
        super().__init__()
        self.root = root or Path.cwd()
        self._paths = candidates(self.root)

    def compose(self) -> ComposeResult:
        with Vertical(id="open-dialog", classes="dialog"):
            yield Label("Open a workflow or a run export", classes="dialog-title")
            yield Input(placeholder="filter, a path or file.py:factory", id="open-filter")
            yield OptionList(*self._options(""), id="open-list")

    def _options(self, text: str) -> list[Option]:
        if is_python_ref(text):  # a Python-defined workflow: imported when the user opens it
            return [Option(inert(f"◆ python    {text}  (enter imports it)"), id=text)]
        shown = [p for p in self._paths if text.lower() in str(p).lower()]
        if not shown:
            return [Option("no matching files", disabled=True)]
        # File names are data: one could clear the screen or reverse the text after it.
        return [Option(inert(self._label(p)), id=str(p)) for p in shown]

    def _label(self, path: Path) -> str:
        try:
            shown = path.relative_to(self.root)
        except ValueError:
            shown = path
        export = self._paths[path] is FileKind.EXPORT
        return f"{'▷ export ' if export else '◆ workflow'}  {shown}"

    def on_input_changed(self, event: Input.Changed) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        typed = Path(event.value).expanduser()
        if event.value and (typed.is_file() or is_python_ref(event.value)):
            self.dismiss(typed)  # a Python-defined workflow is imported: the user typed it
            return
        options = self.query_one(OptionList)
        if options.option_count and not options.get_option_at_index(0).disabled:
            first = options.get_option_at_index(0).id
            if first:
                self.dismiss(Path(first))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(Path(event.option.id))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
