"""Commands that check determinism: verify (fresh runs, or against an export) and golden."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .app import cli
from .calls_opt import calls_options, replaying_session
from .common import (
    EXIT_FAILED,
    EXIT_INVALID,
    EXIT_OK,
    die,
    echo,
    load_or_die,
    parse_payload,
    payload_option,
)
from .completion import WORKFLOW
from .options import run_options, run_settings

if TYPE_CHECKING:
    from ..engine.events import TraceEvent
    from ..engine.recorded_calls import CallSession
    from ..records.export import RunRecord
    from ..records.runs.settings import RunSettings
    from ..workflow.loader import Workflow


@cli.command()
@click.argument("file", type=WORKFLOW)
@payload_option
@click.option("--runs", "count", type=click.IntRange(2, 50), default=2, help="How many fresh runs.")
@click.option("--against", type=click.Path(dir_okay=False), help="A run export to compare with.")
@run_options
@calls_options
def verify(
    file: str,
    payload: str | None,
    count: int,
    against: str | None,
    calls_mode: str | None,
    offline: bool,
) -> None:
    """Check determinism: fresh runs under different hash seeds, or one run against an export."""
    from ..records.runs.divergence import trace_diff

    workflow = load_or_die(file)
    if (offline or calls_mode) and not against:
        die("--offline and --calls answer from a recording: give it with --against RUN.json")
    settings = run_settings()
    if against:
        _verify_against(workflow, against, payload, settings, calls_mode, offline)
    value = parse_payload(payload, workflow.payload)
    records = _fresh_records(file, value, count, settings)
    first_record = records[0]
    for index, other in enumerate(records[1:], start=2):
        if other.digests != first_record.digests:
            diff = trace_diff(
                first_record.events, other.events, first_record.outputs, other.outputs
            )
            where = diff.first.describe() if diff.first else "results differ"
            echo(f"not deterministic: run {index} differs from run 1: {where}")
            sys.exit(EXIT_FAILED)
    echo(
        f"deterministic: {count} runs under different hash seeds agree on plan, trace and "
        f"results; run digest {first_record.digests['run']}"
    )


def _verify_against(
    workflow: Workflow,
    against: str,
    payload: str | None,
    settings: RunSettings,
    calls_mode: str | None = None,
    offline: bool = False,
) -> None:
    """One fresh run of ``workflow`` compared with the export ``against`` (its calls answered
    as ``calls_mode`` says); exits."""
    from ..records.export import RunRecord
    from ..records.runs.divergence import compare_records, count_tasks, trace_diff

    record = RunRecord.read(against)
    calls = replaying_session(record, calls_mode, offline)
    workflow, settings = _reapplied(record, against, workflow, settings, calls)
    recorded = record.document["workflow"]["name"]
    if recorded != workflow.name and not set(record.plan.names) & set(workflow.graph.nodes):
        die(
            f"{against} records workflow {recorded!r}, not {workflow.name!r}: they share no "
            "task, so there is nothing to compare"
        )
    if record.redacted:
        _verify_redacted(workflow, record, against, payload, settings, calls)
    value = parse_payload(payload, record.payload)
    live = _live_record(workflow, value, settings, calls)
    diff = trace_diff(record.events, live.events, record.outputs, live.outputs)
    if diff.identical and live.digests == record.digests:
        echo(f"identical to {against}: run digest {record.digests['run']}")
        sys.exit(EXIT_OK)
    if live.plan.digest != record.plan.digest and diff.identical:
        echo("plans differ although the traces agree", err=True)
        sys.exit(EXIT_FAILED)
    found = compare_records(record, live).tasks
    if found:
        more = f" ({count_tasks(len(found))})" if len(found) > 1 else ""
        where = found[0].describe(sides=("the record", "this run"))
        echo(f"diverges from the record: {where}{more}")
    else:  # the same tasks did the same things, in another order
        first = diff.first
        echo("diverges from the record: " + (first.describe() if first else "digests differ"))
    sys.exit(EXIT_FAILED)


def _reapplied(
    record: RunRecord,
    against: str,
    workflow: Workflow,
    settings: RunSettings,
    calls: CallSession | None,
) -> tuple[Workflow, RunSettings]:
    """The workflow and run settings that reproduce a what-if fork: its overrides applied
    again (a parameter patched, an output set, a recorded answer edited); as given
    otherwise."""
    from dataclasses import replace

    from ..engine.spec import DEFAULT_ISOLATION
    from ..engine.untrusted import shown
    from ..executors.threads import ThreadExecutor
    from ..records.export.overrides import OverrideError
    from ..records.runs.live import executor_for
    from ..records.runs.whatif import (
        OverridingExecutor,
        check_tasks,
        edit_answers,
        patch_workflow,
        set_outputs,
    )

    overrides = record.overrides
    if not overrides:
        return workflow, settings
    hidden = [o for o in overrides if o.redacted]
    if hidden:
        die(
            f"{against} is a what-if re-run whose override values were redacted "
            f"({shown(hidden[0].option)}): reproducing it needs them; verify against the "
            "unredacted export"
        )
    answers = [o for o in overrides if o.kind == "answer"]
    if answers and calls is None:  # applying the rest alone would reproduce another run
        die(
            f"{against} edits a recorded answer ({shown(answers[0].option)}); live calls "
            "answer none (use --calls offline or fill)"
        )
    # The overrides came with a file: one that names a task this workflow lacks, or that
    # contradicts another, cannot apply; it says so as rerun would, naming the file.
    try:
        check_tasks(overrides, workflow, f"workflow {workflow.name!r}")
        base = Path(workflow.path).resolve().parent if workflow.path != "<string>" else None
        workflow, overrides = patch_workflow(workflow, overrides, base)
        if calls is not None:
            edit_answers(calls.recording, overrides)
    except OverrideError as exc:
        die(f"{against}: an override cannot apply: {exc}")
    outputs = set_outputs(overrides)
    if not outputs:
        return workflow, settings
    # Outermost, so that a task whose output is set is never sent to a child process either.
    inner = executor_for(workflow, settings) or ThreadExecutor()
    executor = OverridingExecutor(inner, outputs)
    return workflow, replace(settings, executor=executor, isolation=DEFAULT_ISOLATION)


def _attempt_outcomes(record: RunRecord) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {}
    for event in record.events:
        if event.status.value != "running":
            found.setdefault(event.task, []).append((event.attempt, event.status.value))
    return found


def _verify_redacted(
    workflow: Workflow,
    record: RunRecord,
    against: str,
    payload: str | None,
    settings: RunSettings,
    calls: CallSession | None = None,
) -> None:
    """A fresh run compared with a redacted export: what can be compared without the
    redacted values (each task's attempts and statuses; output digests that agree); exits."""
    from ..engine.untrusted import shown

    if payload is None:
        die(
            f"{against} is redacted ({', '.join(shown(k) for k in record.redacted)}): give the "
            "payload to run with, --payload JSON or --payload @FILE"
        )
    live = _live_record(workflow, parse_payload(payload, None), settings, calls)
    if live.digests == record.digests:  # the real values: everything was compared
        echo(f"identical to {against}: run digest {record.digests['run']}")
        sys.exit(EXIT_OK)
    recorded, fresh = _attempt_outcomes(record), _attempt_outcomes(live)
    for task in record.plan.names:
        if recorded.get(task) != fresh.get(task):
            echo(
                f"diverges from the record: task {shown(task)}: attempts and statuses "
                f"{recorded.get(task)} in the record, {fresh.get(task)} in this run"
            )
            sys.exit(EXIT_FAILED)
    same_payload = live.digests["payload"] == record.digests["payload"]
    ours = {e.task: e.output_digest for e in live.events if e.output_digest}
    theirs = {e.task: e.output_digest for e in record.events if e.output_digest}
    differing = sorted(t for t in theirs if ours.get(t) != theirs[t])
    if differing and same_payload:
        echo(f"diverges from the record: the output of {shown(differing[0])} differs")
        sys.exit(EXIT_FAILED)
    agreed = len(theirs) - len(differing)
    echo(
        f"agrees with {against} (redacted) on every task's attempts and statuses, and on "
        f"{agreed} of {len(theirs)} output digests"
    )
    not_checked = [f"output of {shown(t)} (it may read a redacted key)" for t in differing]
    if not same_payload:
        not_checked.append("payload, plan, trace and run digests (the payload differs)")
    if not_checked:
        echo("not checked: " + "; ".join(not_checked))
    sys.exit(EXIT_OK)


def _fresh_records(file: str, payload: Any, count: int, settings: RunSettings) -> list[RunRecord]:
    """``count`` runs of ``file`` in child processes, each under its own hash seed, with
    ``settings`` (they share this command's cluster: one started, not one per run).

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
                    *_settings_options(settings),
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


def _settings_options(settings: RunSettings) -> list[str]:
    """The options of ``run`` that give a child the same settings."""
    executor = "threads" if settings.executor is None else settings.executor.option()
    options = ["--workers", str(settings.workers), "--executor", executor]
    if settings.isolation is not None:
        options += ["--isolation", settings.isolation]
    return options


def _live_record(
    workflow: Workflow,
    payload: Any,
    settings: RunSettings,
    calls: CallSession | None = None,
) -> RunRecord:
    from ..engine.capture import descriptors
    from ..engine.untrusted import visible
    from ..records.export import RunRecord
    from ..records.runs.live import LiveRun

    live = LiveRun.start(workflow, payload, settings, calls=calls)
    with descriptors():  # what tasks write to descriptors 1 and 2 is their log, not our stdout
        run = live.run.run_to_end()
    diverged = calls.divergences() if calls is not None else []
    for line in diverged:  # the first cause: what the trace shows follows from it
        echo(f"diverges from the recorded calls: {visible(line)}")
    if diverged:
        sys.exit(EXIT_FAILED)
    return RunRecord.from_run(run, workflow)


GOLDEN_KEYS = ("payload", "plan", "trace", "results")
"""What a golden file pins; files written since the spec was added also hold ``spec``."""


@cli.command()
@click.argument("file", type=WORKFLOW)
@click.argument("golden_file", type=click.Path(dir_okay=False))
@payload_option
@click.option("--update", is_flag=True, help="Write the golden file instead of checking it.")
@run_options
def golden(file: str, golden_file: str, payload: str | None, update: bool) -> None:
    """Check (or --update) a golden file holding plan, trace, results and each task's spec."""
    from ..engine.spec import task_spec
    from ..files import atomic_write

    workflow = load_or_die(file)
    value = parse_payload(payload, workflow.payload)
    live = _live_record(workflow, value, run_settings())
    document = {key: live.document[key] for key in GOLDEN_KEYS}
    document["spec"] = {name: task_spec(node) for name, node in workflow.graph.nodes.items()}
    if update:
        text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        try:
            atomic_write(golden_file, text)
        except OSError as exc:
            die(f"cannot write {golden_file}: {exc.strerror}")
        echo(f"wrote {golden_file}")
        return
    expected = _read_golden(golden_file)
    if "spec" not in expected:  # written before specs were pinned: compare what it has
        del document["spec"]
    if expected == document:
        echo(f"ok: {file} matches {golden_file}")
        return
    echo(f"golden mismatch: {_golden_mismatch(expected, document, golden_file)}")
    sys.exit(EXIT_FAILED)


def _golden_mismatch(expected: dict[str, Any], document: dict[str, Any], golden_file: str) -> str:
    """What differs, cause first: a task's changed spec field, else the first divergent
    event, else the sections that differ."""
    from ..engine.diff import json_changes
    from ..records.runs.divergence import change_line, task_diff, trace_diff

    parts = []
    if "spec" in expected and expected["spec"] != document["spec"]:
        changes = json_changes(expected["spec"], document["spec"])
        shown = [change_line(c, _where(c["path"])) for c in changes[:3]]
        more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
        parts.append("; ".join(shown) + more)
    pinned, live = _golden_events(expected, golden_file), _events(document)
    first = trace_diff(pinned, live).first
    if first is not None and parts:
        parts.append(f"the trace differs from event {first.seq} (task {first.task})")
    elif first is not None:
        outputs = [_outputs(expected), _outputs(document)]
        by_task = [
            replace(d, cause=_SINCE_PINNED.get(d.kind, d.cause))
            for d in task_diff(pinned, live, *outputs)
        ]
        where = by_task[0].describe(sides=("the golden file", "this run")) if by_task else ""
        parts.append(f"event {first.seq}: {where or first.describe()}")
    if not parts:
        keys = [k for k in GOLDEN_KEYS if expected.get(k) != document[k]]
        parts.append(f"in {', '.join(keys)}")
    return "; then ".join(parts)


# A pin is compared with today's code: the same inputs giving another result is a change in
# the code (or in what it reads) since the pin, not evidence of non-determinism.
_SINCE_PINNED = {
    "output": "same inputs and spec, another output than the golden file's: the task's code "
    "(or what it reads) changed since it was written",
    "status": "same inputs and spec, another outcome than the golden file's: the task's code "
    "(or what it reads) changed since it was written",
}


def _outputs(document: dict[str, Any]) -> dict[str, str]:
    """Each task's output as JSON text, to quote the small ones."""
    results = document.get("results")
    if not isinstance(results, dict):
        return {}
    return {str(task): json.dumps(value, sort_keys=True) for task, value in results.items()}


def _where(path: str) -> str:
    """``deploy: with.env`` for the spec path ``$.deploy.with.env``."""
    task, _, rest = path[2:].partition(".")
    return f"{task}: {rest}" if rest else task


def _events(document: dict[str, Any]) -> list[TraceEvent]:
    from ..engine.events import TraceEvent

    return [TraceEvent.from_dicts(event) for event in document["trace"]]


def _read_golden(golden_file: str) -> dict[str, Any]:
    """The golden file as a JSON object, or one line and exit 2."""
    from ..files import read_capped
    from ..workflow.limits import current
    from ..workflow.payload import too_many_digits

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
    missing = [key for key in GOLDEN_KEYS if key not in expected]
    if missing:
        # A damaged pin is an error, not a mismatch: --update would overwrite what it pinned.
        die(f"{golden_file}: not a golden file (it lacks {', '.join(missing)})")
    if not isinstance(expected.get("spec", {}), dict):
        die(f"{golden_file}: not a golden file (its spec is not a JSON object)")
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
