"""``harness-tui rerun``: a recorded run re-run from a task, the other tasks kept."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

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
    redact_option,
    store_option,
)

if TYPE_CHECKING:
    from ..engine.recorded_calls import CallSession
    from ..records.export import RunRecord
    from ..records.export.overrides import Override


@cli.command()
@click.argument("run", metavar="RUN.json|RUN_ID", type=RUN)
@click.option(
    "--from", "task", metavar="TASK", help="A task to re-run from (optional with an override)."
)
@click.option(
    "--set-output",
    "set_outputs",
    multiple=True,
    metavar="TASK=JSON|@FILE",
    help="TASK is not called: its output is this value; its descendants re-run. Repeatable.",
)
@click.option(
    "--set-answer",
    "set_answers",
    multiple=True,
    metavar="TASK#ATTEMPT:N=JSON|@FILE",
    help="The N-th recorded exchange (HTTP and io.call, from 1) of that attempt answers with "
    "this value (an HTTP body: a string as text, else JSON); TASK re-runs. Repeatable.",
)
@click.option(
    "--with",
    "with_params",
    multiple=True,
    metavar="TASK.PARAM=JSON|@FILE",
    help="TASK re-runs with this with: parameter (a patch of the workflow). Repeatable.",
)
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
@redact_option
@run_options
@calls_options
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def rerun(
    run: str,
    task: str | None,
    set_outputs: tuple[str, ...],
    set_answers: tuple[str, ...],
    with_params: tuple[str, ...],
    workflow_file: str | None,
    export_to: str | None,
    store_path: str | None,
    no_store: bool,
    payload: str | None,
    redact: str,
    calls_mode: str | None,
    offline: bool,
    quiet: bool,
) -> None:
    """Re-run a run (an export, or a stored run's id) from TASK, or from what an override
    changes: those tasks and their descendants run with the current code; every other task
    keeps what the record says it did."""
    from ..files import FileKind, file_kind
    from ..records.runs.fork import kept_summary, plan_fork
    from ..records.runs.live import LiveRun

    if payload is not None:
        die("--payload: a re-run uses the record's payload; run the workflow to change it")
    overrides = _overrides(set_outputs, set_answers, with_params)
    if task is None and not overrides:
        die("give --from TASK, or an override: --set-output, --set-answer or --with")
    export_to = _export_target(export_to)
    from_file = file_kind(run) is FileKind.EXPORT
    record, kept_out = _record_of(run, from_file, store_path)
    workflow = load_or_die(workflow_file) if workflow_file else None
    fork = plan_fork(record, task, workflow, run if from_file else None, overrides=overrides)
    calls = replaying_session(record, calls_mode, offline, keep=True)
    if calls is not None:  # what fill sends and records keeps them out too
        calls.secret_headers |= {name.lower() for name in kept_out}
    _edit_answers(record, calls, overrides)
    store = None if no_store else _open_store(store_path, create=True)
    _not_the_store(export_to, store)
    live = LiveRun.fork(fork, run_settings(store), calls=calls)
    run_id = live.ensure_recorded()
    if not quiet:
        order = {name: i for i, name in enumerate(fork.workflow.graph.nodes)}
        starts = sorted(fork.starts, key=order.__getitem__)
        echo(f"re-running from {shown(', '.join(starts))}: {kept_summary(fork, order)}", err=True)
        given = {o.key for o in overrides}
        for override in fork.overrides:
            kept = "" if override.key in given else " (the record's, still applied)"
            echo(f"override: {shown(override.option)}{kept}", err=True)
        if fork.code_folder is not None:  # re-running imports code from there: say where
            echo(f"task code from {shown(_from_here(fork.code_folder))}", err=True)
        if run_id:
            echo(f"run id: {run_id}", err=True)
    _drive(live, quiet)
    _finish(live, quiet, export_to, "harness-run", redact)


def _record_of(
    run: str, from_file: bool, store_path: str | None
) -> tuple[RunRecord, tuple[str, ...]]:
    """The run to re-run, and the headers its recording kept out (the store keeps them; an
    export does not say)."""
    from ..records.export import RunRecord

    if from_file:
        return RunRecord.read(run), ()
    source = _open_store(store_path)
    recorded = source.recorded_with(run)
    return source.export(run), () if recorded is None else recorded.secret_headers


def _edit_answers(
    record: RunRecord, calls: CallSession | None, overrides: tuple[Override, ...]
) -> None:
    """Answer the recorded exchanges ``--set-answer`` names with their values."""
    from ..records.runs.whatif import edit_answers

    answers = [o for o in overrides if o.kind == "answer"]
    if not answers:
        return
    if not record.recordings:
        die(f"{answers[0].option}: {shown(record.source_name)} holds no recorded calls "
            "(record them with run --record)")  # fmt: skip
    if calls is None:
        die(f"{answers[0].option}: edits a recorded answer; live calls answer none "
            "(use --calls offline or fill)")  # fmt: skip
    edit_answers(calls.recording, answers)


def _overrides(
    outputs: tuple[str, ...], answers: tuple[str, ...], params: tuple[str, ...]
) -> tuple[Override, ...]:
    """The overrides as typed, in option order by kind; a bad one is one line, exit 2."""
    from ..records.export.overrides import parse_override

    typed = [("output", t) for t in outputs] + [("answer", t) for t in answers]
    return tuple(
        parse_override(kind, text) for kind, text in [*typed, *(("with", t) for t in params)]
    )


def _from_here(folder: Path) -> str:
    """``folder`` relative to the working directory when inside it (``.`` for itself)."""
    try:
        return str(folder.relative_to(Path.cwd()))
    except ValueError:
        return str(folder)
