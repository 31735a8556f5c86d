"""``harness-tui diff``: plan diff of two workflow versions, or trace diff of two exports."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TYPE_CHECKING

import click

from ..engine.untrusted import shown, visible
from .app import cli
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    data_table,
    die,
    echo,
    echo_json,
    parse_payload,
    table_console,
)
from .completion import RUN

if TYPE_CHECKING:
    from ..engine.diff import PlanDiff
    from ..engine.scheduler import PlanStep
    from ..records.export import RunRecord
    from ..workflow.loader import Workflow


def _load(spec: str) -> Workflow:
    from ..workflow.sources import load_source

    return load_source(spec)


def _is_export(spec: str) -> bool:
    from ..files import FileKind, file_kind

    return file_kind(spec) is FileKind.EXPORT


_RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
"""A run id of the store (``new_run_id``): read from the store when no file has that name."""


def _is_run(spec: str) -> bool:
    """Whether ``spec`` names a run: an export file, or a run id of the store."""
    return _is_export(spec) or (_RUN_ID.fullmatch(spec) is not None and not os.path.exists(spec))


def _record(spec: str, store_path: str | None, *, lean: bool = False) -> RunRecord:
    """The run ``spec`` names, as an export (a stored run is exported, running no code)."""
    from ..records.export import RunRecord

    if _is_export(spec):
        return RunRecord.read(spec, lean=lean)
    from .records_cmds import _open_store

    record = _open_store(store_path).export(spec)
    return record.let_arrays_go() if lean else record  # the run it was made from goes


def _records(old: str, new: str, store_path: str | None, tui: bool) -> tuple[RunRecord, RunRecord]:
    """The two runs to compare. The command compares their views, so export files are read
    lean, two files as a pair (one parsed document at a time); the screen shows more of them."""
    from ..records.export import RunRecord

    if not tui and _is_export(old) and _is_export(new):
        return RunRecord.read_pair(old, new)
    return _record(old, store_path, lean=not tui), _record(new, store_path, lean=not tui)


@cli.command()
@click.argument("old", type=RUN)
@click.argument("new", type=RUN)
@click.option("--payload", metavar="JSON|@FILE", help="Payload for both versions.")
@click.option("--old-payload", metavar="JSON|@FILE", help="Payload for OLD.")
@click.option("--new-payload", metavar="JSON|@FILE", help="Payload for NEW.")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when the plans differ.")
@click.option("--tui", is_flag=True, help="Open the side-by-side diff screen.")
@click.option(
    "--store", "store_path", type=click.Path(), help="The run store the run ids are read from."
)
def diff(
    old: str, new: str, payload: str | None, old_payload: str | None,
    new_payload: str | None, as_json: bool, exit_code: bool, tui: bool, store_path: str | None,
) -> None:  # fmt: skip
    """Compare the plans of two workflow versions (files or path@REV from git).

    Given two runs (exports, or run ids of the store), print where their traces diverge
    instead.
    """
    old_export, new_export = _is_run(old), _is_run(new)
    if old_export and new_export:
        _trace_diff(*_records(old, new, store_path, tui), as_json, exit_code, tui)
        return
    if old_export or new_export:
        export, other = (old, new) if old_export else (new, old)
        die(
            f"{export} is a run and {other} is not: diff two workflows (plans) or two runs "
            "(traces); for an export against a workflow use "
            f"'harness-tui verify {other} --against {export}'"
        )
    if payload and (old_payload or new_payload):
        die("use --payload, or --old-payload/--new-payload, not both")
    old_wf, new_wf = _load(old), _load(new)
    old_value = parse_payload(old_payload or payload, old_wf.payload, "--old-payload")
    new_value = parse_payload(new_payload or payload, new_wf.payload, "--new-payload")
    from ..workflow.loader import diff_workflows

    result = diff_workflows(old_wf, old_value, new_wf, new_value)
    if tui:
        from ..tui.diff_app import run_diff_app

        run_diff_app(old_wf, old_value, new_wf, new_value)
        return
    if as_json:
        echo_json(result.to_json(), sort_keys=True)
    else:
        _print_side_by_side(result, old, new)
    sys.exit(EXIT_FAILED if exit_code and result.changes_run else EXIT_OK)


_TABLE_ROWS = 5_000
"""The most tasks shown as a table on a terminal (Rich lays out 5,000 rows in about a
second, 100,000 in twenty); more are lines, as when piped."""


def _print_side_by_side(result: PlanDiff, old: str, new: str) -> None:
    from ..engine.diff import MARKERS, DiffKind

    colours = {
        DiffKind.ADDED: "green", DiffKind.REMOVED: "red", DiffKind.MOVED: "cyan",
        DiffKind.CHANGED: "yellow", DiffKind.RENAMED: "magenta",
    }  # fmt: skip

    def side(step: PlanStep | None) -> str:
        return f"{step.index:>3} {step.task} {step.task_id[:8]}" if step else ""

    if not sys.stdout.isatty() or len(result.rows) > _TABLE_ROWS:
        # For diff tools, cut and grep (and at 100,000 tasks in a second, where a table
        # takes half a minute): a header line, then one line per task, tab-separated.
        lines = [f"\t{visible(old)}\t\t{visible(new)}"]
        lines.extend(
            f"{MARKERS[row.kind]}\t{visible(side(row.old))}\t{MARKERS[row.kind]}\t"
            f"{visible(side(row.new))}"
            for row in result.rows
        )
        echo("\n".join(lines))
    else:
        table = data_table(box=None, pad_edge=False, show_edge=False)
        table.add_column("", width=1)
        table.add_column(old, overflow="fold")
        table.add_column("", width=1)
        table.add_column(new, overflow="fold")
        for row in result.rows:
            marker = MARKERS[row.kind]
            table.add_row(
                marker, side(row.old), marker, side(row.new), style=colours.get(row.kind, "")
            )
        table_console().print(table)
    console = table_console()
    for change in result.changes():
        if change.kind is DiffKind.CHANGED or change.renamed_from or change.level_changed:
            details = ", ".join(
                f"{name}: {_value(value['old'])} -> {_value(value['new'])}"
                for name, value in change.fields.items()
            )
            extra = f" (renamed from {change.renamed_from})" if change.renamed_from else ""
            level = (
                f" level {change.old_level} -> {change.new_level}" if change.level_changed else ""
            )
            console.print(f"~ {change.task}{extra}:{level} {details}".rstrip(), highlight=False)
    for name, value in result.settings.items():
        line = f"~ workflow {name}: {_value(value['old'])} -> {_value(value['new'])}"
        console.print(line, highlight=False)
    for value in result.payload:
        where = f"payload {shown(value['path'])}"
        if "added" in value:
            line = f"+ {where}: {_value(value['added'])}"
        elif "removed" in value:
            line = f"- {where}: {_value(value['removed'])}"
        else:
            line = f"~ {where}: {_value(value['old'])} -> {_value(value['new'])}"
        console.print(line, highlight=False)
    console.print(result.summary_line(), highlight=False)


def _value(value: object) -> str:
    """A workflow or payload value in a diff line: JSON, shortened, and visible."""
    return shown(json.dumps(value, ensure_ascii=False))


def _trace_diff(a: RunRecord, b: RunRecord, as_json: bool, exit_code: bool, tui: bool) -> None:
    from ..records.runs.divergence import compare_records, count_tasks

    if tui:
        from ..tui.diff_app import run_record_diff_app

        run_record_diff_app(a, b)
        return
    # Aligned by task, not position: once one plan shifts, a positional diff calls every
    # later event different.
    comparison = compare_records(a, b)
    found = comparison.tasks
    if as_json:
        plan = comparison.plan.to_json() if comparison.plan else None
        document = {"plan": plan, "tasks": [d.to_json() for d in found]}
        echo_json(document, sort_keys=True)
    elif not found:
        echo(f"traces agree task by task ({len(a.events)} and {len(b.events)} events)")
    else:
        if comparison.plan is not None and not comparison.plan.identical:
            echo(f"workflows: {comparison.plan.summary_line()}")
        echo(f"first divergence: {found[0].describe()}")
        for difference in found[1:]:
            echo(f"  {difference.describe()}")
        echo(count_tasks(len(found)))
    changed = bool(found) or a.digests["run"] != b.digests["run"]
    sys.exit(EXIT_FAILED if exit_code and changed else EXIT_OK)
