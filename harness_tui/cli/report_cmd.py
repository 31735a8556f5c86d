"""``harness-tui report``: a run (an export, or a stored run's id) as a bug report to read."""

from __future__ import annotations

import os

import click

from .app import cli
from .common import die, echo
from .completion import RUN
from .records_cmds import _not_the_store, _open_store, store_option


@cli.command()
@click.argument("run", metavar="RUN.json|RUN_ID", type=RUN)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "html"]),
    default=None,
    help="markdown (a Mermaid DAG that issue trackers render) or html (one self-contained file). "
    "Default: as -o FILE ends (.html, .htm), else markdown.",
)
@click.option("-o", "--output", metavar="FILE", help="Write the report here (default: stdout).")
@store_option
def report(run: str, fmt: str | None, output: str | None, store_path: str | None) -> None:
    """Write a report of a run: versions, the DAG by final status, the first failure, the
    trace, the failed tasks' logs, digests, and the commands to replay and verify it."""
    from ..files import FileKind, atomic_write, check_target, file_kind
    from ..records.export import RunRecord
    from ..records.reports.html import REPORT_SUFFIXES, render_report

    if file_kind(run) is FileKind.EXPORT or os.path.isfile(run):  # a file is read as an export
        record = RunRecord.read(run)
        source = os.path.basename(run)
    else:
        store = _open_store(store_path)
        _not_the_store(output, store)
        record = store.export(run)
        source = f"{record.document['workflow']['name']}-{run}.json"
    if fmt is None:  # -o report.html is an HTML page, not Markdown under that name
        fmt = REPORT_SUFFIXES.get(os.path.splitext(output or "")[1].lower(), "markdown")
    text = render_report(record, fmt, source)
    if output is None:
        echo(text, nl=False)
        return
    target = check_target(output)
    try:
        atomic_write(target, text)
    except OSError as exc:
        die(f"cannot write {output}: {exc.strerror}")
    echo(f"report: {output}", err=True)
