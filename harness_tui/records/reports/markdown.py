"""A run as a bug report a person reads: Markdown (issue trackers render its Mermaid DAG).

Built from a :class:`~.export.RunRecord` only (no code runs): workflow and tool versions,
the DAG coloured by each task's final status, the first failure with its error and
traceback, the trace as a table, the logs of the tasks that failed, the digests, and the
commands to replay and verify. Every text that came from the run (names, errors, logs,
payload values) is escaped for where it lands: a Markdown table cell, a code fence, a
Mermaid label. :mod:`.report_html` renders the same facts as one self-contained HTML file.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from ...engine.events import FAILURE_STATUSES, PENDING, RUN_FAILING_STATUSES, TraceEvent
from ...engine.untrusted import visible
from ..export import RunRecord
from ..export.overrides import override_cause

__all__ = [
    "DASHED",
    "MERMAID_MAX_EDGES",
    "MERMAID_MAX_TEXT",
    "STATUS_COLOURS",
    "Facts",
    "commands",
    "dependencies",
    "facts",
    "failure_logs",
    "markdown_report",
    "mermaid_dag",
    "mermaid_label",
    "mermaid_note",
    "trace_rows",
    "versions",
    "visible_block",
]

STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "succeeded": ("#d4edda", "#2e7d32"),
    "fallback": ("#fff3cd", "#b8860b"),
    "skipped": ("#eeeeee", "#888888"),
    "failed": ("#f8d7da", "#c62828"),
    "timed_out": ("#f8d7da", "#c62828"),
    "upstream_failed": ("#fff7f7", "#c62828"),
    "cancelled": ("#eeeeee", "#c62828"),
    "running": ("#dbe9f6", "#1565c0"),
    PENDING: ("#ffffff", "#888888"),
}
"""Fill and border of a task by its final status (``pending``: no event yet; ``running``: no
final one), in the Mermaid DAG and the HTML one; ``upstream_failed`` is drawn dashed."""
DASHED = "upstream_failed"


@dataclass(frozen=True, slots=True)
class Facts:
    """What a report shows, read once from a record.

    Attributes:
        record: the run.
        final: each task's final status (``pending`` when it has no event).
        first_failure: the first failed attempt's event, if any.
        failed_tasks: tasks whose final status fails the run, in plan order.
        source: how the report names the export in its commands.
    """

    record: RunRecord
    final: dict[str, str]
    first_failure: TraceEvent | None
    failed_tasks: list[str]
    source: str


def facts(record: RunRecord, source: str) -> Facts:
    """The facts of ``record``; ``source`` is the export's file name for the commands."""
    final: dict[str, str] = dict.fromkeys(record.plan.names, PENDING)
    for event in record.events:
        final[event.task] = str(event.status)
    first = next((e for e in record.events if e.status in FAILURE_STATUSES), None)
    failed = [t for t in record.plan.names if final[t] in RUN_FAILING_STATUSES]
    return Facts(record, final, first, failed, source)


def dependencies(record: RunRecord) -> dict[str, list[str]]:
    """Each task's dependencies, from the embedded workflow (no code imported)."""
    graph = record.workflow.graph
    return {name: list(graph[name].depends_on) for name in record.plan.names}


def _node_id(index: int) -> str:
    return f"t{index}"


def mermaid_label(text: str) -> str:
    """``text`` as a Mermaid label: quoted, with ``"``, ``<``, ``>``, ``&``, ``#`` and
    backticks as HTML entities (Mermaid reads ``#...;`` codes), controls made visible."""
    shown = visible(text)
    return "".join(f"#{ord(c)};" if c in '"<>&#`\\|[]{}()' else c for c in shown)


MERMAID_MAX_EDGES = 500
"""Mermaid's ``maxEdges``: it refuses to draw a diagram with more edges. It is one of its
``secure`` settings, which a diagram's init directive cannot raise."""
MERMAID_MAX_TEXT = 50_000
"""Mermaid's ``maxTextSize`` (characters of diagram text), a ``secure`` setting too."""
_BANDS = 30
"""Bands of plan levels in a summary: at most 30 * 29 / 2 = 435 edges between them."""
_WORST_FIRST = (
    "failed", "timed_out", "upstream_failed", "cancelled", "running", "fallback", "skipped",
    PENDING, "succeeded",
)  # fmt: skip


def mermaid_dag(facts_: Facts) -> str:
    """The DAG as a Mermaid ``flowchart``: one node per task, or, past what Mermaid draws
    (:data:`MERMAID_MAX_EDGES`, :data:`MERMAID_MAX_TEXT`), a summary with one node per band
    of plan levels (see :func:`mermaid_note`)."""
    edges = sum(len(deps) for deps in dependencies(facts_.record).values())
    if edges <= MERMAID_MAX_EDGES:
        text = _mermaid_tasks(facts_)
        if len(text) <= MERMAID_MAX_TEXT:
            return text
    return _mermaid_bands(facts_)


def mermaid_note(facts_: Facts, dag: str) -> str:
    """The line that says ``dag`` (from :func:`mermaid_dag`) is a summary, or ``""``."""
    if not dag.startswith("%% summary"):
        return ""
    record = facts_.record
    edges = sum(len(deps) for deps in dependencies(record).values())
    return (
        f"The DAG has {len(record.plan):,} tasks and {edges:,} dependencies, more than Mermaid "
        f"draws ({MERMAID_MAX_EDGES} edges, {MERMAID_MAX_TEXT:,} characters): each box below "
        "is a band of plan levels with its tasks' final statuses. `--format html` draws "
        "every task."
    )


def _mermaid_bands(facts_: Facts) -> str:
    """The summary: one node per band of consecutive plan levels, with its tasks' final
    statuses counted, an edge where a dependency crosses bands, a class for the worst."""
    plan = facts_.record.plan
    depth = max(plan.levels, default=0) + 1
    bands = min(depth, _BANDS)
    band_of = {name: level * bands // depth for name, level in zip(plan.names, plan.levels,
                                                                      strict=True)}  # fmt: skip
    members: list[list[str]] = [[] for _ in range(bands)]
    for name in plan.names:
        members[band_of[name]].append(name)
    lines = ["%% summary: one node per band of plan levels", "flowchart LR"]
    used = set()
    for band, names in enumerate(members):
        if not names:
            continue
        levels = sorted({plan.levels[plan.index_of[n]] for n in names})
        span = f"level {levels[0]}" if len(levels) == 1 else f"levels {levels[0]}-{levels[-1]}"
        counts = {status: 0 for status in _WORST_FIRST}
        for name in names:
            counts[facts_.final[name]] = counts.get(facts_.final[name], 0) + 1
        shown = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        worst = next(status for status in _WORST_FIRST if counts[status])
        used.add(worst)
        lines.append(f'    b{band}["{span}: {len(names)} tasks<br/>{shown}"]:::{worst}')
    crossing = {
        (band_of[dep], band_of[name])
        for name, deps in dependencies(facts_.record).items()
        for dep in deps
        if band_of[dep] != band_of[name]
    }
    lines += [f"    b{a} --> b{b}" for a, b in sorted(crossing)]
    return "\n".join(lines + _class_lines(used))


def _class_lines(used: set[str]) -> list[str]:
    lines = []
    for status in sorted(used):
        fill, stroke = STATUS_COLOURS[status]
        dash = ",stroke-dasharray:4" if status == DASHED else ""
        lines.append(f"    classDef {status} fill:{fill},stroke:{stroke}{dash}")
    return lines


def _mermaid_tasks(facts_: Facts) -> str:
    """One node per task (ids ``t0``, ``t1``... in plan order, labels escaped), one edge per
    dependency, a class per final status."""
    names = list(facts_.record.plan.names)
    ids = {name: _node_id(i) for i, name in enumerate(names)}
    lines = ["flowchart LR"]
    for name in names:
        status = facts_.final[name]
        lines.append(f'    {ids[name]}["{mermaid_label(name)}<br/>{status}"]:::{status}')
    for name, deps in dependencies(facts_.record).items():
        for dep in deps:
            lines.append(f"    {ids[dep]} --> {ids[name]}")
    return "\n".join(lines + _class_lines(set(facts_.final.values())))


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#!|~&])")


def md_text(value: Any) -> str:
    """An untrusted value as inert Markdown inline text (one line)."""
    return _MD_SPECIAL.sub(r"\\\1", visible(str(value)))


def fenced(text: str) -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def commands(facts_: Facts) -> list[str]:
    """The commands that replay and verify this run (a name holding control characters shows
    them as escapes: the command is for a person to read before running it)."""
    record = facts_.record
    source = visible(shlex.quote(facts_.source))
    path = visible(shlex.quote(str(record.document["workflow"]["path"])))
    verify = f"harness-tui verify {path} --against {source}"
    if record.redacted:
        verify += " --payload @PAYLOAD.json"
    return [f"harness-tui replay {source}", f"harness-tui show {source}", verify]


def versions(record: RunRecord) -> list[list[str]]:
    """``[what, version]`` rows: the workflow, the tool, the export format, the environment."""
    doc = record.document
    env = doc.get("environment") or {}
    packages = env.get("packages") or {}
    return [
        ["workflow", f"{doc['workflow']['name']} ({doc['workflow']['path']})"],
        ["workflow digest", doc["workflow"]["digest"]],
        ["harness-tui", str(doc["tool"]["version"])],
        ["export format", str(doc["format_version"])],
        ["python", f"{env.get('implementation', '?')} {env.get('python', '?')}"],
        ["platform", str(env.get("platform", "?"))],
        *([name, str(version)] for name, version in sorted(packages.items())),
    ]


def what_if(record: RunRecord) -> str | None:
    """``What-if re-run of run 1a2b3c4d5e6f: summarize: output overridden by the user`` for
    a fork with overrides (docs/recording.md), else None."""
    overrides = record.overrides
    if not overrides:
        return None
    parent = str(record.document["forked_from"]["run_digest"])[:12]
    changes = "; ".join(f"{o.task}: {override_cause(o)}" for o in overrides)
    return f"What-if re-run of run {parent}: {changes}."


def trace_rows(record: RunRecord) -> list[list[str]]:
    """The trace as rows: seq, task, status, attempt, duration, error."""
    rows = []
    for event in record.events:
        duration = "" if event.duration is None else f"{event.duration:.3f}s"
        error = "" if event.error is None else f"{event.error['type']}: {event.error['message']}"
        rows.append(
            [str(event.seq), event.task, str(event.status), str(event.attempt), duration, error]
        )
    return rows


def failure_logs(facts_: Facts) -> list[tuple[str, int, str]]:
    """``(task, attempt, log text)`` of every attempt of the tasks that failed."""
    found = []
    for (task, attempt), log in sorted(facts_.record.logs.items(), key=lambda kv: str(kv[0])):
        if task in facts_.failed_tasks or (
            facts_.first_failure is not None and task == facts_.first_failure.task
        ):
            found.append((task, attempt, log.text))
    return found


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(md_text(cell) for cell in row) + " |" for row in rows)
    return lines


def _md_failure(facts_: Facts) -> list[str]:
    event = facts_.first_failure
    if event is None:
        return ["## First failure", "", "No attempt failed."]
    error = event.error or {"type": "?", "message": ""}
    lines = [
        "## First failure",
        "",
        f"Task **{md_text(event.task)}**, attempt {event.attempt}: "
        f"`{md_text(error['type'])}` {md_text(error['message'])}",
    ]
    if event.traceback:
        lines += ["", fenced(visible_block(event.traceback))]
    return lines


def visible_block(text: str) -> str:
    """A multi-line untrusted text with every control but line breaks and tabs escaped."""
    return "\n".join(visible(line) for line in text.splitlines())


def markdown_report(facts_: Facts) -> str:
    """The report as GitHub-flavoured Markdown with a Mermaid DAG."""
    record = facts_.record
    title = md_text(record.document["workflow"]["name"])
    lines = [f"# Run report: {title}", "", f"Status: **{md_text(record.status)}**"]
    if record.redacted:
        keys = ", ".join(md_text(k) for k in record.redacted)
        lines += ["", f"Redacted keys: {keys} (values shown as `<redacted>`)."]
    changed = what_if(record)
    if changed is not None:
        lines += ["", md_text(changed)]
    lines += [
        "",
        "## Versions",
        "",
        *_md_table(["what", "version"], versions(record)),
    ]
    dag = mermaid_dag(facts_)
    note = mermaid_note(facts_, dag)
    lines += ["", "## DAG", "", *([note, ""] if note else []), "```mermaid", dag, "```", ""]
    lines += _md_failure(facts_)
    header = ["seq", "task", "status", "attempt", "duration", "error"]
    lines += ["", "## Trace", "", *_md_table(header, trace_rows(record))]
    logs = failure_logs(facts_)
    if logs:
        lines += ["", "## Logs of failed tasks"]
        for task, attempt, text in logs:
            lines += ["", f"{md_text(task)}, attempt {attempt}:", "", fenced(visible_block(text))]
    digests = [[k, v] for k, v in sorted(record.digests.items())]
    lines += ["", "## Digests", "", *_md_table(["part", "sha256"], digests)]
    lines += ["", "## Replay and verify", "", fenced("\n".join(commands(facts_))), ""]
    return "\n".join(lines)
