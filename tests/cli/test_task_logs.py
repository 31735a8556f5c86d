"""Task logs through the records layer and the CLI: store (and a store migrated from schema
2), export, replay, ``--export -`` kept clean, ``--logs``, ``verify`` (issue 12)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from harness_tui.engine.capture import AttemptLog
from harness_tui.engine.clock import FakeClock
from harness_tui.files import FileError
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.replay import replay, replay_run
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.records.store.schema import MIGRATIONS, SCHEMA_VERSION
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]
PRINTING = ROOT / "tests" / "tui" / "data" / "printing_pipeline.yaml"
V0_STORE = ROOT / "tests" / "records" / "data" / "store-v0.sqlite3"

EXPECTED = {
    ("chatty", 1): AttemptLog(
        "loading batch 1 of 3\nloading batch 2 of 3\nloading batch 3 of 3\n"
        "\x1b[31mnot red\x1b[0m [bold]not bold[/bold]\na line on stderr\n"
        "INFO tasks.chatty: an info record\nWARNING tasks.chatty: quota at 80%\n"
        "from chatty's thread\n"
    ),
    ("flaky", 1): AttemptLog("flaky attempt 1\n"),
    ("flaky", 2): AttemptLog("flaky attempt 2\n"),
}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command in a child process: real file descriptors, as a user has them."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )


def recorded_run(store: RunStore) -> str:
    workflow = load_workflow(PRINTING)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store, clock=FakeClock()))
    live.drive()
    assert live.run.logs() == EXPECTED and live.problem is None
    assert live.run_id is not None
    return live.run_id


def test_logs_are_stored_with_their_task_and_come_back_in_the_export(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run_id = recorded_run(store)
    assert store.load(run_id).logs == EXPECTED
    record = store.export(run_id)
    assert record.logs == EXPECTED
    logs = {(a["task"], a["attempt"]): a["log"] for a in record.document["attempts"]}
    assert logs[("chatty", 1)] == {"text": EXPECTED[("chatty", 1)].text, "truncated": False}


def test_a_store_of_schema_2_migrates_and_records_logs(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    shutil.copy(V0_STORE, path)
    with sqlite3.connect(path) as db:  # bring the release-0 file to exactly schema 2
        for number in (0, 1):
            db.executescript(MIGRATIONS[number])
        db.execute("PRAGMA user_version = 2")
    store = RunStore(path)
    assert store.schema_version == SCHEMA_VERSION == 10
    old = [row for row in store.runs() if row["status"] == "succeeded"]
    assert old and all(store.export(row["id"]).logs == {} for row in old)
    run_id = recorded_run(store)
    assert store.load(run_id).logs == EXPECTED
    assert store.integrity_check() == "ok"


def test_an_export_keeps_logs_and_a_replay_shows_them(tmp_path: Path) -> None:
    workflow = load_workflow(PRINTING)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    path = live.export().write(tmp_path / "run.json")
    record = RunRecord.read(path)
    assert record.logs == EXPECTED
    assert replay(record).identical
    replayed = replay_run(record).run_to_end()
    assert replayed.logs() == EXPECTED


def test_a_redacted_export_keeps_logs_that_hold_no_redacted_value() -> None:
    workflow = load_workflow(PRINTING)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    record = live.export(redact=["rows"])
    logs = [a["log"]["text"] for a in record.document["attempts"] if a["log"]]
    assert logs == [log.text for log in EXPECTED.values()]  # nothing of "rows" was in them


def test_run_export_to_stdout_is_clean_json_when_tasks_print() -> None:
    result = cli("run", str(PRINTING), "--no-store", "--export", "-")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert RunRecord.parse(result.stdout).logs == EXPECTED
    assert document["status"] == "succeeded"
    assert "loading batch" not in result.stderr  # captured, not shown without --logs


def test_logs_stream_to_stderr_with_task_and_attempt() -> None:
    result = cli("run", str(PRINTING), "--no-store", "--export", "-", "--logs", "-q")
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)
    assert result.stderr.splitlines() == [
        "chatty#1 | loading batch 1 of 3",
        "chatty#1 | loading batch 2 of 3",
        "chatty#1 | loading batch 3 of 3",
        "chatty#1 | \\x1b[31mnot red\\x1b[0m [bold]not bold[/bold]",
        "chatty#1 | a line on stderr",
        "chatty#1 | INFO tasks.chatty: an info record",
        "chatty#1 | WARNING tasks.chatty: quota at 80%",
        "chatty#1 | from chatty's thread",
        "flaky#1 | flaky attempt 1",
        "flaky#2 | flaky attempt 2",
    ]


def test_verify_works_on_a_workflow_whose_tasks_print() -> None:
    result = cli("verify", str(PRINTING))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("deterministic: 2 runs")


@pytest.mark.parametrize("line", ["\x1b[2Jcleared", "[red]markup[/red]"])
def test_logs_lines_show_escapes_instead_of_obeying_them(line: str, tmp_path: Path) -> None:
    (tmp_path / "hostile.py").write_text(
        f"def shout(inputs):\n    print({line!r})\n    return 1\n", encoding="utf-8"
    )
    (tmp_path / "hostile.yaml").write_text(
        "name: hostile\ntasks:\n  shout: {run: 'hostile:shout'}\n", encoding="utf-8"
    )
    result = cli("run", str(tmp_path / "hostile.yaml"), "--no-store", "--logs", "-q")
    assert "\x1b" not in result.stderr
    assert result.stderr.splitlines() == [
        f"shout#1 | {line.replace(chr(27), chr(92) + 'x1b')}",
    ]


def test_logs_count_against_the_export_size_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_tui.workflow.limits import ENV_VAR

    workflow = load_workflow(PRINTING)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(clock=FakeClock()))
    live.drive()
    full = live.export()
    size = len(full.to_text().encode())
    monkeypatch.setenv(ENV_VAR, f"export_bytes={size - 1}")
    path = full.write(tmp_path / "run.json")  # over the limit with its logs: they give way
    monkeypatch.setenv(ENV_VAR, f"export_bytes={size}")
    record = RunRecord.read(path)
    assert record.logs == {} and "took the export over" in record.document["logs_omitted"]
    assert record.digests == full.digests and replay(record).identical
    monkeypatch.setenv(ENV_VAR, "export_bytes=1000")  # too big even without them: refused
    with pytest.raises(FileError, match="over the 1,000-byte limit"):
        full.write(tmp_path / "small.json")
