"""Commands that check determinism: verify (fresh runs, or against an export) and golden."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .app import cli
from .common import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    die,
    load_or_die,
    parse_payload,
    payload_option,
)

if TYPE_CHECKING:
    from ..engine.events import TraceEvent
    from ..records.export import RunRecord
    from ..workflow.loader import Workflow


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@payload_option
@click.option("--runs", "count", type=click.IntRange(2, 50), default=2, help="How many fresh runs.")
@click.option("--against", type=click.Path(dir_okay=False), help="A run export to compare with.")
def verify(file: str, payload: str | None, count: int, against: str | None) -> None:
    """Check determinism: fresh runs under different hash seeds, or one run against an export."""
    from ..records.divergence import trace_diff
    from ..records.export import RunRecord

    workflow = load_or_die(file)
    if against:
        record = RunRecord.read(against)
        value = parse_payload(payload, record.payload)
        live = _live_record(workflow, value)
        diff = trace_diff(record.events, live.events, record.outputs, live.outputs)
        if live.plan.digest != record.plan.digest and diff.identical:
            click.echo("plans differ although the traces agree", err=True)
            sys.exit(EXIT_FAILED)
        if diff.identical and live.digests == record.digests:
            click.echo(f"identical to {against}: run digest {record.digests['run']}")
            sys.exit(EXIT_OK)
        first = diff.first
        click.echo("diverges from the record: " + (first.describe() if first else "digests differ"))
        sys.exit(EXIT_FAILED)
    value = parse_payload(payload, workflow.payload)
    records = _fresh_records(file, value, count)
    first_record = records[0]
    for index, other in enumerate(records[1:], start=2):
        if other.digests != first_record.digests:
            diff = trace_diff(
                first_record.events, other.events, first_record.outputs, other.outputs
            )
            where = diff.first.describe() if diff.first else "results differ"
            click.echo(f"not deterministic: run {index} differs from run 1: {where}")
            sys.exit(EXIT_FAILED)
    click.echo(
        f"deterministic: {count} runs under different hash seeds agree on plan, trace and "
        f"results; run digest {first_record.digests['run']}"
    )


def _fresh_records(file: str, payload: Any, count: int) -> list[RunRecord]:
    """``count`` runs of ``file`` in child processes, each under its own hash seed.

    The payload reaches the children through a file: on their command line a large one
    exceeds the system's argument size (E2BIG).
    """
    from ..records.export import RunRecord

    records: list[RunRecord] = []
    with tempfile.TemporaryDirectory(prefix="harness-verify-") as folder:
        payload_file = Path(folder) / "payload.json"
        payload_file.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
        for index in range(count):
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "harness_tui",
                    "run",
                    file,
                    "--payload",
                    f"@{payload_file}",
                    "--no-store",
                    "--export",
                    "-",
                    "--quiet",
                ],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONHASHSEED": str(index * 7919 + 1)},
            )
            if result.returncode == EXIT_INVALID or not result.stdout:
                last = result.stderr.strip().splitlines()[-1:]
                die(f"run {index + 1} could not start: {last}")
            records.append(RunRecord.parse(result.stdout, f"run {index + 1}"))
    return records


def _live_record(workflow: Workflow, payload: Any) -> RunRecord:
    from ..engine.orchestrator import TaskOrchestrator
    from ..records.export import RunRecord

    orchestrator = TaskOrchestrator(workflow.graph, on_failure=workflow.on_failure)
    return RunRecord.from_run(orchestrator.start(payload).run_to_end(), workflow)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("golden_file", type=click.Path(dir_okay=False))
@payload_option
@click.option("--update", is_flag=True, help="Write the golden file instead of checking it.")
def golden(file: str, golden_file: str, payload: str | None, update: bool) -> None:
    """Check (or --update) a golden file holding plan, trace and results."""
    from ..records.divergence import trace_diff
    from ..records.export import atomic_write

    workflow = load_or_die(file)
    value = parse_payload(payload, workflow.payload)
    live = _live_record(workflow, value)
    document = {key: live.document[key] for key in ("payload", "plan", "trace", "results")}
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if update:
        try:
            atomic_write(golden_file, text)
        except OSError as exc:
            die(f"cannot write {golden_file}: {exc.strerror}")
        click.echo(f"wrote {golden_file}")
        return
    expected = _read_golden(golden_file)
    if expected == document:
        click.echo(f"ok: {file} matches {golden_file}")
        return
    diff = trace_diff(_golden_events(expected, golden_file), live.events)
    if diff.first:
        click.echo(f"golden mismatch: {diff.first.describe()}")
    else:
        keys = [k for k in ("payload", "plan", "results") if expected.get(k) != document[k]]
        click.echo(f"golden mismatch in {', '.join(keys)}")
    sys.exit(EXIT_FAILED)


def _read_golden(golden_file: str) -> dict[str, Any]:
    """The golden file as a JSON object, or one line and exit 2."""
    from ..workflow.limits import current
    from ..workflow.payload import read_capped, too_many_digits

    limit = current().export_bytes
    try:
        data = read_capped(golden_file, limit)
    except OSError as exc:
        die(f"{golden_file}: cannot read golden file ({exc.strerror}); create it with --update")
    if data is None:
        die(f"{golden_file}: over the {limit:,}-byte limit")
    try:
        expected = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        die(f"{golden_file}: not a golden file (not UTF-8 text)")
    except json.JSONDecodeError as exc:
        die(f"{golden_file}: not a golden file (not JSON: {exc.msg}, line {exc.lineno})")
    except RecursionError:
        die(f"{golden_file}: not a golden file (nested too deeply)")
    except ValueError:
        die(f"{golden_file}: not a golden file ({too_many_digits()})")
    if not isinstance(expected, dict):
        die(f"{golden_file}: not a golden file (not a JSON object)")
    return expected


def _golden_events(expected: dict[str, Any], golden_file: str) -> list[TraceEvent]:
    """The golden file's trace as events, or one line and exit 2."""
    from ..engine.events import TraceEvent

    trace = expected.get("trace", [])
    if not isinstance(trace, list):
        die(f"{golden_file}: not a golden file (its trace is not a list)")
    try:
        return [TraceEvent.from_dicts(event) for event in trace]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"lacks {exc}" if isinstance(exc, KeyError) else str(exc)
        die(f"{golden_file}: not a golden file (a trace event {detail})")
