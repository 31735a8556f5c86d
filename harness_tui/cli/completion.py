"""Shell completion for what the commands take: workflow files, ``file.py:factory``, exports
and run ids. Click drives it (``_HARNESS_TUI_COMPLETE=bash_source harness-tui``, see
``docs/install.md``); these parameter types say what to offer.

Completing runs no user code: a factory is offered from the module's top-level ``def``s,
read with :mod:`ast`; run ids come from the store, opened read-only and never created.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import click
from click.shell_completion import CompletionItem

__all__ = ["RUN", "RUN_ID", "WORKFLOW", "complete_files", "complete_run_ids"]

_SUFFIXES = (".yaml", ".yml", ".json", ".py")
_SOURCE_BYTES = 1024 * 1024  # a module larger than this offers no factories
_MOST = 200  # more would scroll a terminal away; the user types on


def complete_files(incomplete: str) -> list[CompletionItem]:
    """Folders, workflow files (``.yaml``/``.yml``), exports (``.json``) and Python modules
    under the typed prefix; after ``file.py:``, the module's top-level functions."""
    if ":" in incomplete:
        module, _, prefix = incomplete.rpartition(":")
        if module.endswith(".py"):
            return [
                CompletionItem(f"{module}:{name}")
                for name in _functions(Path(module))
                if name.startswith(prefix)
            ][:_MOST]
        return []
    folder, slash, prefix = incomplete.rpartition("/")
    head = folder + slash
    where = Path(head or ".").expanduser()
    items: list[CompletionItem] = []
    try:
        entries = sorted(os.scandir(where), key=lambda entry: entry.name)
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(prefix) or (entry.name.startswith(".") and not prefix):
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir:
            items.append(CompletionItem(f"{head}{entry.name}/"))
        elif entry.name.endswith(_SUFFIXES):
            items.append(CompletionItem(f"{head}{entry.name}"))
        if len(items) >= _MOST:
            break
    return items


def _functions(path: Path) -> list[str]:
    """The names of the module's top-level functions, without importing it."""
    try:
        with path.open("rb") as file:
            source = file.read(_SOURCE_BYTES + 1)
        if len(source) > _SOURCE_BYTES:
            return []
        tree = ast.parse(source, filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]


def complete_run_ids(ctx: click.Context, incomplete: str) -> list[CompletionItem]:
    """The ids of the runs in the store named by ``--store`` (or the user's), newest first,
    each with its workflow and status as help. No store: nothing (one is never created)."""
    from ..records.errors import RecordError
    from ..records.store import RunStore, default_store_path

    path = Path(ctx.params.get("store_path") or default_store_path())
    if not path.is_file():
        return []
    try:
        with RunStore(path, create=False, write=False) as store:
            rows = store.runs()
    except (RecordError, OSError):
        return []
    return [
        CompletionItem(row["id"], help=f"{row['workflow']} {row['status']}")
        for row in rows
        if str(row["id"]).startswith(incomplete)
    ][:_MOST]


class _WorkflowType(click.Path):
    """A workflow file, ``file.py:factory`` or an export: completes files and factories."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        return complete_files(incomplete)


class _RunType(click.types.StringParamType):
    """``RUN.json`` or a run id of the store (a plain string): completes both."""

    name = "run"

    def __init__(self, files: bool) -> None:
        self.files = files

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        runs = complete_run_ids(ctx, incomplete)
        return [*runs, *complete_files(incomplete)] if self.files else runs


WORKFLOW = _WorkflowType()
"""The type of a FILE argument: a workflow, ``file.py:factory`` or an export."""
RUN = _RunType(files=True)
"""The type of a ``RUN.json|RUN_ID`` argument."""
RUN_ID = _RunType(files=False)
"""The type of a ``RUN_ID`` argument."""
