"""``harness-tui rerun``: a recorded run re-run from a task, the other tasks kept."""

from __future__ import annotations

from pathlib import Path

import click

from ..engine.untrusted import shown
from .app import cli
from .calls_opt import calls_options, replaying_session
from .common import die, echo, load_or_die
from .completion import RUN
from .options import run_options, run_settings
from .records_cmds import (
    _drive,
    _export_target,
    _finish,
    _not_the_store,
    _open_store,
    store_option,
)


@cli.command()
@click.argument("run", metavar="RUN.json|RUN_ID", type=RUN)
@click.option("--from", "task", required=True, metavar="TASK", help="The task to re-run from.")
@click.option(
    "--workflow",
    "workflow_file",
    type=click.Path(dir_okay=False),
    help="Run this version of the workflow (kept tasks must be unchanged).",
)
@click.option("--export", "export_to", metavar="FILE|-", help="Write the new run's export here.")
@store_option
@click.option("--no-store", is_flag=True, help="Do not record the new run in the store.")
@click.option("--payload", hidden=True, help="Refused: a re-run uses the record's payload.")
@run_options
@calls_options
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def rerun(
    run: str,
    task: str,
    workflow_file: str | None,
    export_to: str | None,
    store_path: str | None,
    no_store: bool,
    payload: str | None,
    calls_mode: str | None,
    offline: bool,
    quiet: bool,
) -> None:
    """Re-run a run (an export, or a stored run's id) from TASK: TASK and its descendants run
    with the current code; every other task keeps what the record says it did."""
    from ..files import FileKind, file_kind
    from ..records.export import RunRecord
    from ..records.runs.fork import kept_summary, plan_fork
    from ..records.runs.live import LiveRun

    if payload is not None:
        die("--payload: a re-run uses the record's payload; run the workflow to change it")
    export_to = _export_target(export_to)
    from_file = file_kind(run) is FileKind.EXPORT
    record = RunRecord.read(run) if from_file else _open_store(store_path).export(run)
    workflow = load_or_die(workflow_file) if workflow_file else None
    fork = plan_fork(record, task, workflow, run if from_file else None)
    store = None if no_store else _open_store(store_path, create=True)
    _not_the_store(export_to, store)
    calls = replaying_session(record, calls_mode, offline, keep=True)
    live = LiveRun.fork(fork, run_settings(store), calls=calls)
    run_id = live.ensure_recorded()
    if not quiet:
        order = {name: i for i, name in enumerate(fork.workflow.graph.nodes)}
        echo(f"re-running from {shown(task)}: {kept_summary(fork, order)}", err=True)
        if fork.code_folder is not None:  # re-running imports code from there: say where
            echo(f"task code from {shown(_from_here(fork.code_folder))}", err=True)
        if run_id:
            echo(f"run id: {run_id}", err=True)
    _drive(live, quiet)
    _finish(live, quiet, export_to, "harness-run", "")


def _from_here(folder: Path) -> str:
    """``folder`` relative to the working directory when inside it (``.`` for itself)."""
    try:
        return str(folder.relative_to(Path.cwd()))
    except ValueError:
        return str(folder)
