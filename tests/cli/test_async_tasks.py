"""``async def`` tasks referenced from a workflow file: awaited on the harness's loop, timed
out for real, the same digest with any worker count, and in a child process too."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli

TASKS = """\
import asyncio
async def fetch(inputs):
    await asyncio.sleep(0.02)
    print("fetched", inputs["params"]["n"])
    return {"n": inputs["params"]["n"]}
async def slow(inputs):
    await asyncio.sleep(10)
"""
WORKFLOW = """\
name: asy
on_failure: continue
tasks:
  a: {run: 'async_ref_tasks:fetch', with: {n: 1}}
  b: {run: 'async_ref_tasks:fetch', with: {n: 2}, depends_on: [a]}
  c: {run: 'async_ref_tasks:slow', timeout_seconds: 0.3}
  d: {run: 'async_ref_tasks:fetch', with: {n: 3}, isolation: process}
"""


@pytest.fixture
def workflow(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "async_ref_tasks.py").write_text(TASKS)
    (tmp_path / "asy.yaml").write_text(WORKFLOW)
    sys.modules.pop("async_ref_tasks", None)
    yield tmp_path / "asy.yaml"
    sys.modules.pop("async_ref_tasks", None)


def test_async_tasks_from_a_file_run_time_out_and_agree(workflow: Path, tmp_path: Path) -> None:
    documents = []
    for workers in ("1", "4"):
        target = tmp_path / f"run{workers}.json"
        args = ["run", str(workflow), "--no-store", "-q", "--workers", workers]
        result = CliRunner().invoke(cli, [*args, "--export", str(target)])
        assert result.exit_code == 1, result.output  # c timed out
        documents.append(json.loads(target.read_text()))
    serial, parallel = documents
    assert serial["digests"] == parallel["digests"]
    assert serial["results"] == {"a": {"n": 1}, "b": {"n": 2}, "d": {"n": 3}}
    statuses = {e["task"]: e["status"] for e in serial["trace"]}
    assert statuses["c"] == "timed_out"
    logs = {(a["task"], a["attempt"]): a["log"] for a in serial["attempts"]}
    assert logs[("b", 1)]["text"] == "fetched 2\n"  # its output, captured in the loop's thread
