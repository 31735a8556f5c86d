"""Commands for runs: run, runs, export, resume, replay, verify, golden."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

import click

from ..engine.capture import descriptors
from ..engine.untrusted import shown, visible
from ..records.store.statuses import StoredStatus
from .app import cli
from .calls_opt import intercept
from .common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    data_table,
    die,
    echo,
    echo_error_line,
    echo_json,
    echo_json_text,
    load_or_die,
    parse_payload,
    payload_option,
    table_console,
)
from .completion import RUN_ID, WORKFLOW
from .options import record_option, run_options, run_settings

if TYPE_CHECKING:
    from rich.table import Table

    from ..engine.events import TraceEvent
    from ..records.export import RunRecord
    from ..records.runs.live import LiveRun
    from ..records.store import RunStore

store_option = click.option(
    "--store",
    "store_path",
    type=click.Path(),  # a folder is the store's own one-line refusal
    default=None,
    help="The run store (default: runs.sqlite3 in the user data folder).",
)
format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["harness-run", "chrome-trace"]),
    default="harness-run",
    help="harness-run (replayable) or chrome-trace (timeline for Perfetto).",
)
redact_option = click.option(
    "--redact",
    default="",
    metavar="KEY,...",
    help="Take the values of these keys out of the export (payload, workflow, results, "
    "errors, logs): each becomes <redacted>.",
)


def _open_store(path: str | None, create: bool = False, write: bool | None = None) -> RunStore:
    """The store at ``path`` (default: the user's), closed when the command ends (its
    write-ahead log checkpointed and removed). Reading commands never create one."""
    from ..records.store import RunStore, default_store_path

    store = RunStore(path or default_store_path(), create=create, write=write)
    click.get_current_context().call_on_close(store.close)
    return _warn_damage(store)


def _not_the_store(target: str | None, store: RunStore | None) -> None:
    """Refuse an export or report target that is the run store (or its write-ahead log):
    writing there would replace the store with the export."""
    if not target or target == "-" or store is None:
        return
    path = Path(target)
    files = [Path(f"{store.path}{suffix}") for suffix in ("", "-wal", "-shm")]
    for file in files:
        same = path.resolve() == file.resolve()
        with contextlib.suppress(OSError):
            same = same or os.path.samefile(path, file)
        if same:
            die(f"cannot write {target}: it is the run store {store.path}")


def _warn_damage(store: RunStore) -> RunStore:
    if store.damage:
        echo(f"warning: {store.damage}", err=True)
    return store


def _export_target(target: str | None) -> str | None:
    """Check where the export goes before the run starts, as an absolute path (a task that
    changes directory must not move it); one line and exit 2 if it cannot be written."""
    if not target or target == "-":
        return target
    from ..files import check_target

    return str(check_target(target))


def _write_export(record: RunRecord, target: str, fmt: str) -> None:
    from ..files import atomic_write
    from ..records.export.chrome import chrome_trace
    from ..workflow.limits import current

    limit = current().export_bytes
    try:
        if fmt == "harness-run" and target != "-":
            # Written as it is made, never one string of the whole run; logs give way
            # before the export is refused.
            record = record.write_within(target, limit)
        else:
            if fmt == "harness-run":
                record, text = record.within(limit)
            else:
                text = json.dumps(chrome_trace(record)) + "\n"
            if target == "-":
                echo_json_text(text, nl=False)
                return
            atomic_write(target, text)
    except OSError as exc:
        die(f"cannot write {target}: {exc.strerror}")
    echo(f"exported: {target}", err=True)
    if record.logs_omitted:
        echo(f"warning: task logs left out: {record.logs_omitted}", err=True)


logs_option = click.option(
    "--logs",
    "show_logs",
    is_flag=True,
    help="Stream what tasks print or log to stderr, each line prefixed with task#attempt.",
)


@contextlib.contextmanager
def _stdout_kept_clean() -> Iterator[None]:
    """While tasks run, anything that still reaches stdout (a thread started outside any
    attempt, a child process writing to file descriptor 1) goes to stderr instead, so that
    ``--export -`` is nothing but the export."""
    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):  # not a real file (a test runner's buffer)
        fd = -1
    saved = os.dup(fd) if fd >= 0 else -1
    if saved >= 0:
        sys.stderr.flush()
        os.dup2(sys.stderr.fileno(), fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved >= 0:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)


class _LogLines:
    """``--logs``: captured text as whole lines on stderr, each prefixed ``task#attempt |``.

    Writes arrive in pieces (and from the task's threads), so partial lines wait per attempt
    until their newline or :meth:`flush`.
    """

    def __init__(self) -> None:
        self._pending: dict[tuple[str, int], str] = {}

    def __call__(self, task: str, attempt: int, text: str) -> None:
        key = (task, attempt)
        *lines, rest = (self._pending.pop(key, "") + text).split("\n")
        for line in lines:
            self._echo(key, line)
        if rest:
            self._pending[key] = rest

    def _echo(self, key: tuple[str, int], line: str) -> None:
        where = f"{key[0]}#{key[1]}" if key[1] else "unattributed"
        echo(f"{visible(where)} | {visible(line)}", err=True)

    def flush(self) -> None:
        for key, rest in sorted(self._pending.items()):
            self._echo(key, rest)
        self._pending.clear()


def _summary(live: LiveRun) -> None:
    """Final statuses, final failures, the leaf outputs and the run digest, on stderr (stdout
    stays clean for ``--export -``)."""
    summary = live.summary()
    parts = ", ".join(f"{n} {status}" for status, n in summary.counts.items())
    echo(f"{shown(summary.workflow)}: {summary.status} ({parts})", err=True)
    for task, error in summary.failures:
        # One line per failure: a message of many lines or megabytes is shown, not obeyed.
        echo(
            f"  {shown(task)}: {shown(error.get('type'))}: {shown(error.get('message'))}", err=True
        )
    echo_json(summary.outputs, err=True)
    echo(f"run digest: {summary.digest}", err=True)


def _finish(live: LiveRun, quiet: bool, export_to: str | None, fmt: str, redact: str) -> None:
    """Summary, export, exit code: the end of ``run`` and ``resume``. A run the store was
    asked to record and could not (a full disk) says so even with ``quiet`` and exits 1:
    its record failed, whatever the run did."""
    from ..engine.events import RunStatus

    if not quiet:
        _summary(live)
    if live.problem:
        echo_error_line(f"error: {live.problem}")
    if export_to:
        _write_export(live.export(redact=[k for k in redact.split(",") if k]), export_to, fmt)
    status = live.run.status
    if status is RunStatus.CANCELLED:
        sys.exit(EXIT_INTERRUPTED)
    succeeded = status is RunStatus.SUCCEEDED and not live.problem
    sys.exit(EXIT_OK if succeeded else EXIT_FAILED)


@cli.command()
@click.argument("file", type=WORKFLOW)
@payload_option
@click.option("--export", "export_to", metavar="FILE|-", help="Write the run export here.")
@format_option
@store_option
@click.option("--no-store", is_flag=True, help="Do not record the run in the store.")
@click.option(
    "--jsonl", "jsonl_path", type=click.Path(dir_okay=False), help="Stream events as JSON Lines."
)
@redact_option
@logs_option
@run_options
@record_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def run(
    file: str,
    payload: str | None,
    export_to: str | None,
    fmt: str,
    store_path: str | None,
    no_store: bool,
    jsonl_path: str | None,
    redact: str,
    show_logs: bool,
    quiet: bool,
) -> None:
    """Run a workflow headless; exit 0 if it succeeded, 1 if it failed, 2 on invalid input."""
    from ..records.runs.live import LiveRun

    workflow = load_or_die(file)
    value = parse_payload(payload, workflow.payload)
    export_to = _export_target(export_to)
    store = None if no_store else _open_store(store_path, create=True)
    _not_the_store(export_to, store)
    live = LiveRun.start(workflow, value, run_settings(store))
    run_id = live.ensure_recorded()
    if run_id and not quiet:
        echo(f"run id: {run_id}", err=True)
    jsonl: IO[str] | None = None
    if jsonl_path == "-":
        die("--jsonl -: give a file name (stdout carries only --export -)")
    if jsonl_path:
        try:
            jsonl = open(jsonl_path, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            die(f"cannot write {jsonl_path}: {exc.strerror}")
        from ..records.export.jsonl import JsonLines

        stream, lines = jsonl, JsonLines()

        def write_line(event: TraceEvent) -> None:
            stream.write(lines.line(event) + "\n")
            stream.flush()

        live.run.add_listener(write_line)
    try:
        _drive(live, quiet, show_logs)
    finally:
        if jsonl:
            with contextlib.suppress(OSError):  # a failed write was reported below already
                jsonl.close()
    for error in live.run.listener_errors:
        echo(f"warning: --jsonl {jsonl_path} stopped: {error}", err=True)
    _finish(live, quiet, export_to, fmt, redact)


def _drive(live: LiveRun, quiet: bool, show_logs: bool = False) -> None:
    """Drive the run to its end (stdout kept clean), with the task logs on stderr when
    ``show_logs``. Ctrl+C stops the run into its cleanups (docs/architecture.md, "Stop and
    cleanup"): it ends ``cancelled``, recorded and exported like any other end."""
    lines = _LogLines() if show_logs else None
    if lines is not None:
        live.run.add_log_listener(lines)
    try:
        with _stdout_kept_clean(), descriptors(), _ctrl_c_stops(live):
            for _ in range(_STOPS + 1):
                try:
                    _drive_with_progress(live, quiet or show_logs)
                    return
                except KeyboardInterrupt:  # it came between two tasks, not inside one
                    live.driver.cancel()
            _leave_now(live)
    finally:
        if lines is not None:
            lines.flush()


_STOPS = 2
"""Ctrl+C presses that stop the run in order (the second cancels the cleanups too). The next
one leaves at once, for a task that will not stop: the run stays ``interrupted``, resumable,
as after a kill (the finished tasks are committed first unless a write was under way)."""


def _leave_now(live: LiveRun) -> NoReturn:
    """The third Ctrl+C: what the store has pending is written (unless a write is under way),
    the line that says how to go on reaches the terminal, and the processes tasks started
    end with the command, as at any exit."""
    from ..engine.capture import current
    from .children import leave_now

    live.flush(if_idle=True)
    # The signal handler runs in the context of the attempt it interrupted: without this,
    # the line would join that attempt's log instead of the terminal.
    current.set(None)
    if live.run_id:
        leave_now(f"{StoredStatus.INTERRUPTED}; continue with: harness-tui resume {live.run_id}")
    leave_now(StoredStatus.INTERRUPTED)  # not sys.exit: a task still running must not hold us


@contextlib.contextmanager
def _ctrl_c_stops(live: LiveRun) -> Iterator[None]:
    """While the run is driven, SIGINT stops it (:meth:`LiveRun.interrupt`) instead of
    unwinding the command from wherever the main thread happens to be. Once the run has
    ended, to the command's end (its summary, its export, its executor and store closing),
    a Ctrl+C leaves at once: no traceback or ``Aborted!`` from wherever it lands."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from .children import leave_now

    presses = 0

    def on_sigint(signum: int, frame: object) -> None:
        nonlocal presses
        presses += 1
        if presses > _STOPS:
            _leave_now(live)
        live.interrupt()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    except BaseException:
        signal.signal(signal.SIGINT, previous)
        raise
    signal.signal(signal.SIGINT, lambda signum, frame: leave_now(StoredStatus.INTERRUPTED))
    context = click.get_current_context(silent=True)
    if context is None:
        signal.signal(signal.SIGINT, previous)
    else:  # the root's callbacks run after the command's own (its executor, its store)
        context.find_root().call_on_close(lambda: signal.signal(signal.SIGINT, previous))


def _drive_with_progress(live: LiveRun, quiet: bool) -> None:
    """Drive the run to its end, with a progress bar on a terminal (not under ``--logs``,
    whose lines it would overwrite)."""
    if quiet or not sys.stderr.isatty():
        live.drive()
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    the_run = live.run
    with Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        console=table_console(stderr=True),
        transient=True,
    ) as progress:
        bar = progress.add_task("running", total=len(the_run.plan))

        def advance(events: list[TraceEvent]) -> None:
            upcoming = the_run.next_step
            progress.update(bar, description=shown(upcoming.task) if upcoming else "")
            progress.update(bar, completed=the_run.cursor)

        live.driver.on_events = advance
        live.driver.batch_seconds = 0.1
        live.drive()


@cli.command()
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.option("--tui", is_flag=True, help="Open the run browser instead of printing the list.")
def runs(store_path: str | None, as_json: bool, tui: bool) -> None:
    """List the runs in the store, newest first, with their status (tab-separated when piped)."""
    from ..records.store import default_store_path

    if tui:
        from .tui_cmds import open_workbench

        open_workbench(None, None, store_path=store_path, browse=True)
        return
    where = store_path or default_store_path()
    if store_path is None and not default_store_path().exists():
        rows: list[dict[str, Any]] = []  # nothing recorded yet: an empty list, not an error
    else:
        rows = _open_store(store_path).runs()
    if as_json:
        echo_json(rows)
        return
    console = table_console()
    if not console.is_terminal:
        # For cut, awk and grep: one header line, one line per run, whole values.
        lines = ["\t".join(RUNS_COLUMNS)] + ["\t".join(_run_cells(row, wide=True)) for row in rows]
        echo("\n".join(lines))
        return
    if not rows:
        echo(f"no runs recorded yet in {where}")
        return
    console.print(_runs_table(rows, f"runs in {where}"))


RUNS_COLUMNS = ("id", "workflow", "payload", "status", "started", "done")


def _run_cells(row: dict[str, Any], wide: bool) -> list[str]:
    """One run's cells; workflow names come from files, so they are made visible, not obeyed.
    Narrow (a terminal): an 8-character payload digest and the start to the minute."""
    started = str(row["started_at"])
    if not wide:
        started = started.replace("T", " ")[:16]
    return [
        visible(str(row["id"])),
        visible(str(row["workflow"])),
        str(row["payload_digest"])[: 12 if wide else 8],
        str(row["status"]),
        started,
        f"{row['tasks_done']}/{row['tasks_total']}",
    ]


def _runs_table(rows: list[dict[str, Any]], title: str) -> Table:
    """The runs as a borderless table that fits 80 columns: the workflow name gives way."""
    from rich.text import Text

    # One space between columns, and only the workflow name may give way (to "…"): ids,
    # statuses and counts are what people copy and compare.
    table = data_table(
        title=Text(title),
        title_justify="left",
        box=None,
        pad_edge=False,
        collapse_padding=True,
        header_style="bold",
    )
    for column in RUNS_COLUMNS:
        table.add_column(column, no_wrap=column != "workflow", min_width=4)
    for row in rows:
        table.add_row(
            *(Text(cell, no_wrap=True, overflow="ellipsis") for cell in _run_cells(row, wide=False))
        )
    return table


@cli.command()
@click.argument("run_id", type=RUN_ID)
@click.argument("file", metavar="FILE|-")
@format_option
@redact_option
@store_option
def export(run_id: str, file: str, fmt: str, redact: str, store_path: str | None) -> None:
    """Export a stored run to a JSON file (written atomically)."""
    file = _export_target(file) or file
    store = _open_store(store_path)
    _not_the_store(file, store)
    _write_export(store.export(run_id, redact=[k for k in redact.split(",") if k]), file, fmt)


@cli.command()
@click.argument("run_id", type=RUN_ID)
@store_option
@click.option("--export", "export_to", metavar="FILE|-", help="Write the run export here.")
@click.option(
    "--force",
    is_flag=True,
    help="Take over a run whose lease still looks live (its process hung, or died on "
    "another host before the lease expired). Make sure nothing else is running it.",
)
@logs_option
@run_options
@record_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def resume(
    run_id: str,
    store_path: str | None,
    export_to: str | None,
    force: bool,
    show_logs: bool,
    quiet: bool,
) -> None:
    """Continue a stored run (interrupted or abandoned) from its last committed task."""
    from ..records.runs.live import LiveRun

    export_to = _export_target(export_to)
    # Never create a store (a mistyped path is an error), but write to the one found.
    store = _open_store(store_path, create=False, write=True)
    _not_the_store(export_to, store)
    live = LiveRun.resume(run_id, run_settings(store), force=force)
    the_run = live.run
    if the_run.records_calls:  # it recorded before: its HTTP goes on being recorded
        intercept()
    if the_run.finished:
        echo(f"run {run_id} had already finished: {the_run.status.value}", err=True)
    else:
        if not quiet:
            echo(f"resuming {run_id} at task {the_run.cursor + 1}/{len(the_run.plan)}", err=True)
        _drive(live, quiet=quiet, show_logs=show_logs)
    _finish(live, quiet, export_to, "harness-run", "")


@cli.command()
@click.argument("file", type=WORKFLOW)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def replay(file: str, as_json: bool) -> None:
    """Replay an exported run offline (no user code runs) and check it reproduces exactly."""
    from ..records.export import RunRecord
    from ..records.runs.replay import replay as do_replay

    record = RunRecord.read(file, lean=True)  # its views only: the arrays go before the run
    report = do_replay(record)
    if as_json:
        echo(
            json.dumps(
                {
                    "identical": report.identical,
                    "unchecked": list(report.unchecked),
                    "events": len(report.run.events),
                    "digests": report.run.digests(),
                    "differences": [d.to_json() for d in report.diff.differences],
                },
                indent=2,
            )
        )
    elif report.identical and report.unchecked:
        echo(
            f"replayed {len(report.run.events)} events of {shown(record.workflow.name)}: the same "
            f"tasks, statuses and attempts; not checked (redacted): {', '.join(report.unchecked)}"
        )
    elif report.identical:
        echo(
            f"replayed {len(report.run.events)} events of {record.workflow.name}: identical "
            f"(plan, trace and digests); run digest {record.digests['run']}"
        )
    else:
        first = report.diff.first
        echo("replay differs: " + (first.describe() if first else "digests differ"), err=True)
    sys.exit(EXIT_OK if report.identical else EXIT_FAILED)
