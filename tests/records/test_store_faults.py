"""The store under faults: two resumes of one run, a damaged write-ahead log, a damaged run,
another process writing the same run. Each is one line, and nothing is run twice."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.records.store.wal import check_wal
from harness_tui.workflow.loader import parse_workflow

CORPUS = Path(__file__).resolve().parents[1] / "faults" / "corpus"
CHAIN = parse_workflow(
    "name: chain\ntasks:\n"
    + "".join(f"  t{i}: {{run: builtin:echo, depends_on: [t{i - 1}]}}\n" for i in range(1, 40))
    + "  t0: {run: builtin:echo, with: {x: 1}}\n"
)


def _harness(*args: str, gate: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, **({"FAULT_GATE": str(gate)} if gate else {})}
    return subprocess.Popen(
        [sys.executable, "-m", "harness_tui", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_for(marker: Path, *processes: subprocess.Popen[str]) -> None:
    """Until ``marker`` exists, one of ``processes`` still going (of two resumes, the loser
    may give up before the winner's task makes the marker, on a busy machine)."""
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert any(p.poll() is None for p in processes)
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _stop(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.communicate()


def test_a_second_resume_says_who_holds_the_run_and_exits_2(tmp_path: Path) -> None:
    store, gate = tmp_path / "runs.sqlite3", tmp_path / "gate"
    workflow = str(CORPUS / "exit_zero.yaml")
    running = _harness("run", workflow, "--store", str(store), "-q", gate=gate)
    _wait_for(gate, running)
    with RunStore(store, create=False) as opened:
        (row,) = opened.runs()
    run_id = str(row["id"])
    # While the run still runs: refused, naming the process.
    refused = subprocess.run(
        [sys.executable, "-m", "harness_tui", "resume", run_id, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    holder = f"process {running.pid} on {socket.gethostname()}"
    assert refused.stderr.splitlines() == [
        f"error: run {run_id} is still running: {holder} holds its lease; --force takes it over"
    ]
    _stop(running)
    gate.unlink()
    # Killed: two resumes at once; exactly one takes it, the other says who has it.
    both = [_harness("resume", run_id, "--store", str(store), gate=gate) for _ in range(2)]
    _wait_for(gate, *[p for p in both if p.poll() is None] or both)
    deadline = time.monotonic() + 60  # the loser gives up once it meets the winner's lease
    while all(p.poll() is None for p in both):
        assert time.monotonic() < deadline, "neither resume gave up"
        time.sleep(0.05)
    losers = [p for p in both if p.poll() is not None]
    assert len(losers) == 1
    (winner,) = [p for p in both if p.poll() is None]
    _, err = losers[0].communicate()
    assert losers[0].returncode == 2
    assert err.splitlines()[-1].startswith(f"error: run {run_id} ")
    assert f"process {winner.pid} on {socket.gethostname()}" in err
    assert "Traceback" not in err and "IntegrityError" not in err
    _stop(winner)
    with RunStore(store, create=False) as opened:
        (row,) = opened.runs()
        assert opened.integrity_check() == "ok"
    assert row["status"] == "interrupted" and row["tasks_done"] == 0


def _open_wal_copy(tmp_path: Path) -> tuple[Path, str]:
    """A store whose recorded run is still in its write-ahead log (as after a crash)."""
    tmp_path.mkdir(exist_ok=True)
    source = tmp_path / "live.sqlite3"
    with RunStore(source) as store:
        store._db.execute("PRAGMA wal_autocheckpoint=0")
        live = LiveRun.start(CHAIN, CHAIN.payload, RunSettings(store=store, clock=FakeClock()))
        live.drive()
        for suffix in ("", "-wal"):
            shutil.copy(f"{source}{suffix}", tmp_path / f"runs.sqlite3{suffix}")
    assert live.run_id is not None
    return tmp_path / "runs.sqlite3", live.run_id


def _flip(wal: Path, offset: int) -> None:
    data = bytearray(wal.read_bytes())
    data[offset] ^= 0xFF
    wal.write_bytes(bytes(data))


def test_a_damaged_wal_is_one_line_and_a_kept_copy(tmp_path: Path) -> None:
    store, _ = _open_wal_copy(tmp_path)
    wal = Path(f"{store}-wal")
    assert check_wal(wal) is None
    page = int.from_bytes(wal.read_bytes()[8:12], "big")
    frames = (wal.stat().st_size - 32) // (24 + page)
    assert frames > 3
    _flip(wal, 32 + 1 * (24 + page) + 24 + 10)  # frame 2's page: later frames follow it
    result = CliRunner().invoke(cli, ["runs", "--store", str(store), "--json"])
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert f"frame 2 of {frames} is corrupt" in warnings[0]
    (copy,) = tmp_path.glob("runs.sqlite3-wal.damaged-*")
    assert copy.name in warnings[0]
    assert check_wal(copy) is not None  # the copy is the damaged log, for recovery


def test_a_torn_final_frame_is_normal_and_a_bad_header_is_damage(tmp_path: Path) -> None:
    store, run_id = _open_wal_copy(tmp_path)
    wal = Path(f"{store}-wal")
    wal.write_bytes(wal.read_bytes()[:-100])  # the last append was cut short
    assert check_wal(wal) is None
    with RunStore(store, create=False) as opened:
        assert opened.damage is None
        assert opened.load(run_id).tasks_done > 0
    store, _ = _open_wal_copy(tmp_path / "again")
    wal = Path(f"{store}-wal")
    _flip(wal, 20)  # a salt: the header checksum no longer matches
    with RunStore(store, create=False) as opened:
        assert opened.damage is not None
        assert "header checksum does not match" in opened.damage


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (  # the first event's line of the first batch, the others kept
            "canonical = '{bad' || substr(canonical, instr(canonical, char(10)))",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (  # a line that is JSON but no event
            "canonical = '1' || substr(canonical, instr(canonical, char(10)))",
            "the batch at event 0 does not hold",
        ),
        ("times = x'00'", "the batch at event 0 does not hold"),
        ("events = 1", "the batch at event 0 does not hold 1 events"),
        ("workers = '[1]'", "the batch at event 0 has damaged workers"),
        ("tracebacks = '[]'", "the batch at event 0 has damaged tracebacks"),
        ("tracebacks = '{\"0\": 5}'", "the batch at event 0 has damaged tracebacks"),
        ('tracebacks = \'{"99": "x"}\'', "the batch at event 0 has damaged tracebacks"),
        (  # a canonical line nested past any parser's depth
            "canonical = '{\"a\":' || replace(hex(zeroblob(30000)), '00', '[') "
            "|| substr(canonical, instr(canonical, char(10)))",
            "a value nests too deeply",
        ),
        ("outputs = outputs || char(10) || outputs", "the batch at event 0 holds the output"),
        ("outputs = 'nospace'", "not enough values to unpack"),
    ],
)
def test_a_damaged_run_is_one_line_for_export_and_resume(
    tmp_path: Path, damage: str, message: str
) -> None:
    store, run_id = _open_wal_copy(tmp_path)
    with sqlite3.connect(store) as db:
        db.execute(f"UPDATE batches SET {damage} WHERE seq = 0")
    db.close()
    for args in (["export", run_id, "-"], ["resume", run_id]):
        result = CliRunner().invoke(cli, [*args, "--store", str(store)])
        assert result.exit_code == 2
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"error: run {run_id}: the stored run is damaged: {message}")


@pytest.mark.parametrize("tasks", [-89, 9223372036854775807])
def test_a_damaged_count_of_tasks_neither_breaks_the_listing_nor_leaves_the_plan(
    tmp_path: Path, tasks: int
) -> None:
    store, run_id = _open_wal_copy(tmp_path)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE batches SET tasks = ?", (tasks,))
        db.execute(  # a second damaged batch: a sum of the two would overflow
            "INSERT INTO batches SELECT run_id, seq + 1000, events, tasks, canonical, times, "
            "workers, tracebacks, outputs FROM batches"
        )
    db.close()
    with RunStore(store, create=False) as opened:
        (row,) = opened.runs()
    assert row["id"] == run_id and 0 <= row["tasks_done"] <= row["tasks_total"]


@pytest.mark.parametrize(
    "content", [b"not a database at all" * 100, b"SQLite format 3\x00" + b"\x00" * 84]
)
def test_a_malformed_store_is_one_line(tmp_path: Path, content: bytes) -> None:
    store = tmp_path / "runs.sqlite3"
    store.write_bytes(content)
    result = CliRunner().invoke(cli, ["runs", "--store", str(store)])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {store}: ")


def test_another_writer_of_the_same_run_stops_recording_not_the_harness(tmp_path: Path) -> None:
    """A process that lost its run (``--force`` by someone else) gets a unique-key refusal on
    its next task: one line naming who has the run now, and it records nothing more."""
    path = tmp_path / "runs.sqlite3"
    with RunStore(path) as store:
        live = LiveRun.start(CHAIN, CHAIN.payload, RunSettings(store=store, clock=FakeClock()))
        live.drive(single=True)
        with sqlite3.connect(path) as other:
            other.execute(
                "INSERT INTO batches (run_id, seq, events, tasks, canonical, times, outputs) "
                "VALUES (?, 2, 1, 0, '{}', x'', '')",
                (live.run_id,),
            )
            other.execute("UPDATE runs SET lease_owner = 'elsewhere:42:7'")
        other.close()
        live.drive()
    assert live.run.finished
    assert live.problem == (
        f"the run is no longer recorded: run {live.run_id} is recorded by process 42 on "
        "elsewhere now; this process stopped recording it"
    )


def test_a_full_disk_is_one_line_and_the_run_still_ends(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with RunStore(path) as store:
        live = LiveRun.start(CHAIN, CHAIN.payload, RunSettings(store=store, clock=FakeClock()))
        live.ensure_recorded()
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page
        live.drive()
    assert live.run.finished and live.run.status.value == "succeeded"
    assert live.problem is not None
    assert live.problem.startswith("the run is no longer recorded: ")
    assert "database or disk is full" in live.problem and "\n" not in live.problem
    assert live.export().document["status"] == "succeeded"  # the export does not need the store


def _recorded_store(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "runs.sqlite3"
    with RunStore(path) as store:
        live = LiveRun.start(CHAIN, CHAIN.payload, RunSettings(store=store, clock=FakeClock()))
        live.drive()
        # A log row too, so that its columns are read.
        store._db.execute(
            "INSERT INTO logs (run_id, task, attempt, text, truncated) VALUES (?, 't0', 1, 'x', 0)",
            (live.run_id,),
        )
    assert live.run_id is not None
    return path, live.run_id


@pytest.mark.parametrize(
    ("damage", "commands"),
    [
        # Bytes that are not UTF-8 in a text column (a flipped bit).
        ("UPDATE runs SET workflow_name = CAST(x'ff41' AS TEXT)", ("runs",)),
        ("UPDATE runs SET status = CAST(x'c0' AS TEXT)", ("runs", "export", "report", "resume")),
        ("UPDATE batches SET canonical = CAST(x'fe' AS TEXT)", ("export", "report", "resume")),
        ("UPDATE logs SET text = CAST(x'ff' AS TEXT)", ("export", "report", "resume")),
        # Text where a number belongs, bytes where text does.
        ("UPDATE runs SET tasks_total = 'abc'", ("runs", "export", "report", "resume")),
        ("UPDATE runs SET lease_until = 'abc'", ("runs", "export", "report", "resume")),
        ("UPDATE runs SET status = x'41'", ("runs", "export", "report", "resume")),
        ("UPDATE runs SET workflow_source = x'41'", ("export", "report", "resume")),
        ("UPDATE logs SET text = x'41'", ("export", "report", "resume")),
        ("UPDATE logs SET attempt = 'one'", ("export", "report", "resume")),
        # How the run records its calls: not JSON, the wrong shape, a path that cannot be read.
        ("UPDATE runs SET recording = '{'", ("export", "report", "resume")),
        ('UPDATE runs SET recording = \'{"volatile": "$.a"}\'', ("export", "resume")),
        (
            'UPDATE runs SET recording = \'{"volatile": ["$["], "secret_headers": []}\'',
            ("export", "resume"),
        ),
    ],
)
def test_damaged_values_are_one_line_in_every_command(
    tmp_path: Path, damage: str, commands: tuple[str, ...]
) -> None:
    store, run_id = _recorded_store(tmp_path)
    with sqlite3.connect(store) as db:
        db.execute(damage)
    db.close()
    arguments = {
        "runs": ["runs"],
        "export": ["export", run_id, str(tmp_path / "out.json")],
        "report": ["report", run_id, "-o", str(tmp_path / "out.md")],
        "resume": ["resume", run_id],
    }
    for command in commands:
        result = CliRunner().invoke(cli, [*arguments[command], "--store", str(store)])
        assert result.exit_code == 2, (command, result.output)
        (line,) = result.stderr.splitlines()
        assert line.startswith("error: "), (command, line)
    # A new run beside the damaged one is still recorded.
    workflow = tmp_path / "w.yaml"
    workflow.write_text("name: w\ntasks:\n  a: {run: builtin:echo}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(workflow), "--store", str(store), "-q"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "args",
    [
        ["runs"],
        ["export", "x", "-"],
        ["report", "x"],
        ["resume", "x"],
        ["run", "W"],
        ["serve", "W"],  # these two open the store later, in the workbench: refused before
        ["open", "W"],
    ],
    ids=["runs", "export", "report", "resume", "run", "serve", "open"],
)
def test_a_store_that_is_a_folder_is_one_line(tmp_path: Path, args: list[str]) -> None:
    workflow = tmp_path / "w.yaml"
    workflow.write_text("name: w\ntasks:\n  a: {run: builtin:echo}\n", encoding="utf-8")
    args = [str(workflow) if a == "W" else a for a in args]
    result = CliRunner().invoke(cli, [*args, "--store", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {tmp_path}: a folder, not a run store (name a file in it, such as "
        f"{tmp_path / 'runs.sqlite3'})\n"
    )


def test_a_target_that_is_the_store_is_refused(tmp_path: Path) -> None:
    """``--export`` (or ``report -o``) naming the store, by the same name, another name for
    it, or its write-ahead log: one line, exit 2, the store untouched."""
    workflow = tmp_path / "w.yaml"
    workflow.write_text("name: w\ntasks:\n  a: {run: builtin:echo}\n", encoding="utf-8")
    store = tmp_path / "s.sqlite3"
    first = CliRunner().invoke(cli, ["run", str(workflow), "--store", str(store), "-q"])
    assert first.exit_code == 0, first.output
    (tmp_path / "link.sqlite3").symlink_to(store)
    with RunStore(store, create=False) as opened:
        (row,) = opened.runs()
    before = store.read_bytes()
    run_id = str(row["id"])
    for target in (store, tmp_path / "link.sqlite3", tmp_path / "s.sqlite3-wal"):
        for args in (
            ["run", str(workflow), "--export", str(target)],
            ["export", run_id, str(target)],
            ["resume", run_id, "--export", str(target)],
            ["report", run_id, "-o", str(target)],
        ):
            result = CliRunner().invoke(cli, [*args, "--store", str(store)])
            assert result.exit_code == 2, (args, result.output)
            assert result.stderr == f"error: cannot write {target}: it is the run store {store}\n"
    assert store.read_bytes() == before
