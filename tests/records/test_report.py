"""The run report: a Mermaid DAG checked structurally, escaping, one self-contained HTML file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.records.reports.html import html_report
from harness_tui.records.reports.markdown import facts, markdown_report, mermaid_dag
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]
# A ticket that is not text makes classify fail on its first attempt, every time.
FAILING = {"ticket": 42, "customer": "c-1042", "seed": 10}
NODE = re.compile(r'^    (t\d+)\["([^"]*)<br/>([a-z_]+)"\]:::([a-z_]+)$')
EDGE = re.compile(r"^    (t\d+) --> (t\d+)$")
CLASS = re.compile(r"^    classDef ([a-z_]+) (\S+)$")


def record_of(path: Path, payload: object) -> RunRecord:
    workflow = load_workflow(path)
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    )
    run = orchestrator.start(payload).run_to_end()
    return RunRecord.from_run(run, workflow)


@pytest.fixture(scope="module")
def failed() -> RunRecord:
    return record_of(ROOT / "workflows/agent_triage.yaml", FAILING)


def test_the_mermaid_dag_of_a_failed_agent_triage_run(failed: RunRecord) -> None:
    text = mermaid_dag(facts(failed, "run.json"))
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    nodes = {m[1]: (m[2], m[3], m[4]) for m in map(NODE.match, lines) if m}
    edges = {(m[1], m[2]) for m in map(EDGE.match, lines) if m}
    classes = {m[1] for m in map(CLASS.match, lines) if m}
    assert len(nodes) + len(edges) + len(classes) == len(lines) - 1  # nothing else in it
    names = {label: node for node, (label, _status, _cls) in nodes.items()}
    assert set(names) == set(failed.plan.names)
    status = {label: cls for label, _status, cls in nodes.values()}
    assert all(label_status == cls for _, label_status, cls in nodes.values())
    assert status["classify"] == "failed"
    assert {s for task, s in status.items() if task != "classify"} == {"upstream_failed"}
    graph = failed.workflow.graph
    expected = {(names[dep], names[task]) for task in names for dep in graph[task].depends_on}
    assert edges == expected and len(edges) == 8
    assert classes == {"failed", "upstream_failed"}


def test_the_markdown_report_names_the_first_failure_and_the_commands(failed: RunRecord) -> None:
    text = markdown_report(facts(failed, "run.json"))
    assert "Task **classify**, attempt 1: `AttributeError`" in text
    assert "'int' object has no attribute 'lower'" in text
    assert "Traceback (most recent call last)" in text
    assert "harness-tui replay run.json" in text
    assert "harness-tui verify workflows/agent\\_triage.yaml" not in text  # a command, not text
    assert re.search(r"\nharness-tui verify \S*/agent_triage\.yaml --against run\.json\n", text)
    assert failed.digests["run"] in text
    assert text.count("```mermaid") == 1


HOSTILE_TASKS = """
def shout(inputs):
    print("<script>alert(1)</script> | ``` \\x1b[2J")
    raise RuntimeError('"]:::x\\n<img src=x onerror=alert(1)> | col ```')
"""


def test_untrusted_text_is_escaped_in_every_form(tmp_path: Path) -> None:
    (tmp_path / "hostile_report_tasks.py").write_text(HOSTILE_TASKS, encoding="utf-8")
    path = tmp_path / "<b>x | `y`.yaml"
    path.write_text(
        'name: hostile\ntasks:\n  shout: {run: "hostile_report_tasks:shout"}\n', encoding="utf-8"
    )
    found = facts(record_of(path, {}), "run.json")
    html = html_report(found)
    assert "<script" not in html and "<img" not in html and "<b>x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "\x1b" not in html and "\\x1b[2J" in html
    assert not re.search(r"<[^>]*\s(src|href)=|url\(|https?://(?!www\.w3\.org/2000/svg)", html)
    markdown = markdown_report(found)
    assert "\x1b" not in markdown
    outside_fences = re.sub(r"(?ms)^(`{3,})\w*\n.*?^\1$", "", markdown)
    assert "<img" in markdown and not re.search(r"(?<!\\)<", outside_fences)
    for row in (line for line in markdown.splitlines() if line.startswith("| ")):
        unescaped = re.findall(r"(?<!\\)\|", row)
        assert len(unescaped) in (3, 7), row  # the table's own bars only
    fences = [line for line in markdown.splitlines() if line.startswith("```")]
    assert all(len(line) - len(line.lstrip("`")) >= 3 for line in fences)
    assert "````text" in markdown  # the log holds ```, so its fence is longer
    mermaid = mermaid_dag(found)
    assert all(NODE.match(line) or not line.startswith("    t") for line in mermaid.splitlines())


def test_report_command_writes_html_from_an_export(tmp_path: Path, failed: RunRecord) -> None:
    export = failed.write(tmp_path / "run.json")
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(export), "--format", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "<script" not in html
    assert html.count('class="task status-failed"') == 1
    assert "<h2>Timeline</h2>" in html
    markdown = CliRunner().invoke(cli, ["report", str(export)])
    assert markdown.exit_code == 0 and markdown.output.startswith("# Run report: agent\\_triage")


def test_report_takes_its_format_from_the_output_name_unless_given(
    tmp_path: Path, failed: RunRecord
) -> None:
    # Before: -o report.html wrote Markdown under that name (a browser shows it as one line).
    export = failed.write(tmp_path / "run.json")
    for name, fmt, starts in [
        ("r.html", None, "<!DOCTYPE html>"),
        ("r.HTM", None, "<!DOCTYPE html>"),
        ("r.md", None, "# Run report"),
        ("r.txt", None, "# Run report"),
        ("r2.html", "markdown", "# Run report"),  # as given, whatever the name
    ]:
        given = ["--format", fmt] if fmt else []
        result = CliRunner().invoke(
            cli, ["report", str(export), "-o", str(tmp_path / name), *given]
        )
        assert result.exit_code == 0, result.output
        assert (tmp_path / name).read_text(encoding="utf-8").startswith(starts), name


def test_report_of_a_redacted_export_says_what_was_redacted(tmp_path: Path) -> None:
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")
    orchestrator = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01))
    run = orchestrator.start(FAILING).run_to_end()
    record = RunRecord.from_run(run, workflow, redact=["customer"])
    export = record.write(tmp_path / "red.json")
    result = CliRunner().invoke(cli, ["report", str(export)])
    assert result.exit_code == 0, result.output
    assert "Redacted keys: customer" in result.output and "c-1042" not in result.output
    assert "--payload @PAYLOAD.json" in result.output


def test_report_of_a_stored_run_by_its_id(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    runner = CliRunner()
    ran = runner.invoke(
        cli, ["run", str(ROOT / "workflows/user_profile.yaml"), "--store", db, "-q"]
    )
    assert ran.exit_code == 0, ran.output
    (row,) = json.loads(runner.invoke(cli, ["runs", "--store", db, "--json"]).stdout)
    result = runner.invoke(cli, ["report", row["id"], "--store", db])
    assert result.exit_code == 0, result.output
    assert "# Run report: user\\_profile" in result.output
    assert row["run_digest"] in result.output
    missing = runner.invoke(cli, ["report", "no-such-run", "--store", db])
    assert missing.exit_code == 2 and len(missing.output.strip().splitlines()) == 1


def test_no_byte_a_terminal_obeys_is_in_either_report(tmp_path: Path) -> None:
    """A workflow path and a source name holding escapes (an export edited by hand), and an
    error message holding every attack: both reports show them as visible escapes (a report
    is read with ``cat`` as often as in a browser)."""
    from tests.hostile.corpus import HOSTILE, OBEYED

    (tmp_path / "hostile_report_tasks.py").write_text(
        f"def shout(inputs):\n    raise ValueError({HOSTILE!r})\n", encoding="utf-8"
    )
    path = tmp_path / "w.yaml"
    path.write_text(
        'name: hostile\ntasks:\n  shout: {run: "hostile_report_tasks:shout"}\n', encoding="utf-8"
    )
    record = record_of(path, {})
    document = json.loads(record.to_text())
    document["workflow"]["path"] = HOSTILE + ".yaml"
    found = facts(RunRecord(document), HOSTILE + ".json")
    for report in (markdown_report(found), html_report(found)):
        assert not OBEYED.findall(report), OBEYED.findall(report)[:5]
        assert "\\x1b[2J" in report
