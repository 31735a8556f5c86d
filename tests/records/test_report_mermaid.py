"""A DAG past what Mermaid draws (500 edges, 50,000 characters) is drawn as bands of plan
levels; the slow test renders both forms with the real Mermaid in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.records.reports import markdown as report
from harness_tui.records.reports.markdown import facts, markdown_report, mermaid_dag
from harness_tui.workflow.loader import parse_workflow

ROOT = Path(__file__).resolve().parents[2]
MERMAID = Path(os.environ.get("HARNESS_MERMAID_DIR", ROOT / ".mermaid"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BAND = re.compile(r'^    b(\d+)\["(levels? [0-9-]+): (\d+) tasks<br/>([^"]+)"\]:::([a-z_]+)$')


def record_of(source: str) -> RunRecord:
    workflow = parse_workflow(source)
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    )
    return RunRecord.from_run(orchestrator.start({}).run_to_end(), workflow)


def bipartite(width: int) -> str:
    """``width`` roots (the first fails) and ``width`` sinks that each need every root."""
    roots = [f"r{i}" for i in range(width)]
    lines = ["name: wide", "on_failure: continue", "tasks:"]
    lines += [f"  {r}: {{run: builtin:{'fail' if i == 0 else 'echo'}, with: {{times: 9}}}}"
              for i, r in enumerate(roots)]  # fmt: skip
    lines += [f"  s{i}: {{run: builtin:echo, trigger: all_done, depends_on: [{', '.join(roots)}]}}"
              for i in range(width)]  # fmt: skip
    return "\n".join(lines) + "\n"


def chain(length: int) -> str:
    lines = ["name: long", "tasks:", "  c0: {run: builtin:echo}"]
    lines += [f"  c{i}: {{run: builtin:echo, depends_on: [c{i - 1}]}}" for i in range(1, length)]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def wide() -> RunRecord:
    return record_of(bipartite(25))  # 625 edges


def test_a_dag_past_the_edge_limit_is_drawn_as_bands_of_levels(wide: RunRecord) -> None:
    found = facts(wide, "run.json")
    dag = mermaid_dag(found)
    lines = dag.splitlines()
    assert lines[:2] == ["%% summary: one node per band of plan levels", "flowchart LR"]
    bands = [BAND.match(line) for line in lines if line.startswith("    b") and "[" in line]
    assert [(m[2], m[3], m[4], m[5]) for m in bands if m] == [
        ("level 0", "25", "1 failed, 24 succeeded", "failed"),
        ("level 1", "25", "25 succeeded", "succeeded"),
    ]
    assert "    b0 --> b1" in lines
    markdown = markdown_report(found)
    assert "The DAG has 50 tasks and 625 dependencies, more than Mermaid draws" in markdown
    assert markdown.count("```mermaid") == 1


def test_a_long_chain_keeps_within_both_limits() -> None:
    dag = mermaid_dag(facts(record_of(chain(700)), "run.json"))
    edges = [line for line in dag.splitlines() if " --> " in line]
    assert len(re.findall(r'^    b\d+\["', dag, re.M)) == 30
    assert len(edges) <= report.MERMAID_MAX_EDGES and len(dag) <= report.MERMAID_MAX_TEXT
    assert edges[0] == "    b0 --> b1" and "levels 0-23: 24 tasks<br/>24 succeeded" in dag


def test_a_dag_within_the_limits_is_drawn_task_by_task() -> None:
    dag = mermaid_dag(facts(record_of(bipartite(20)), "run.json"))  # 400 edges
    assert dag.startswith("flowchart LR") and dag.count(" --> ") == 400


def render(tmp_path: Path, diagram: str) -> str:
    """What the real Mermaid says of ``diagram`` in headless Chromium: ``svg`` or its error."""
    script = MERMAID / "node_modules/mermaid/dist/mermaid.min.js"
    page = tmp_path / "render.html"
    page.write_text(
        '<!doctype html><html><body><pre id="out">pending</pre>'
        f'<script src="{script.as_uri()}"></script><script>'
        "mermaid.initialize({startOnLoad: false});"
        f"mermaid.render('dag', {json.dumps(diagram)})"
        ".then(r => { out.textContent = r.svg.startsWith('<svg') ? 'svg' : 'no svg'; })"
        ".catch(e => { out.textContent = 'error: ' + (e && e.message || e); });"
        "</script></body></html>",
        encoding="utf-8",
    )
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--allow-file-access-from-files",
         "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    ).stdout  # fmt: skip
    found = re.search(r'<pre id="out">([^<]*)</pre>', dom)
    assert found, dom[-2000:]
    return found[1]


@pytest.mark.slow
def test_the_real_mermaid_draws_the_summary_and_refuses_the_full_dag(
    tmp_path: Path, wide: RunRecord
) -> None:
    installed = (MERMAID / "node_modules/mermaid/dist/mermaid.min.js").is_file()
    if not (installed and Path(CHROMIUM).is_file()):
        if os.environ.get("CI"):
            pytest.fail("CI installs mermaid and chromium (.ci/run): one is missing")
        pytest.skip("needs npm mermaid in .mermaid/ and chromium (see .ci/run)")
    found = facts(wide, "run.json")
    markdown = markdown_report(found)
    (block,) = re.findall(r"```mermaid\n(.*?)\n```", markdown, re.S)
    assert render(tmp_path, block) == "svg"
    # The oracle itself: the same DAG task by task is past Mermaid's limit.
    full = report._mermaid_tasks(found)
    assert render(tmp_path, full).startswith("error: Edge limit exceeded")
    assert render(tmp_path, mermaid_dag(facts(record_of(bipartite(3)), "run.json"))) == "svg"
