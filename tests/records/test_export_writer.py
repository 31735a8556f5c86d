"""The export writer checks its target before a run and refuses what the reader would."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from harness_tui.files import FileError, atomic_write, check_target
from harness_tui.records.export import RunRecord
from harness_tui.workflow.limits import ENV_VAR, current

CORPUS = Path(__file__).resolve().parents[1] / "faults" / "corpus"


def test_files_get_the_mode_of_a_plain_open(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "a.json", "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left


def test_what_the_reader_would_refuse_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(FileError, match="over the 10-byte limit of the reader"):
        atomic_write(tmp_path / "a.json", "x" * 11, max_bytes=10)
    assert list(tmp_path.iterdir()) == []
    # RunRecord.write applies the reader's own limit.
    record = RunRecord.read(next((Path(__file__).parent / "data").glob("**/*.json")))
    assert current().export_bytes == 256 * 1024 * 1024
    monkeypatch.setenv(ENV_VAR, "export_bytes=100")
    with pytest.raises(FileError, match="100-byte limit"):
        record.write(tmp_path / "b.json")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing/run.json", "no folder"),
        (".", "it is a folder"),
        ("file/run.json", "no folder"),
    ],
)
def test_a_target_that_cannot_be_written_is_one_line(
    tmp_path: Path, name: str, message: str
) -> None:
    (tmp_path / "file").write_text("", "utf-8")
    with pytest.raises(FileError, match=message):
        check_target(tmp_path / name)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    with pytest.raises(FileError, match="cannot write"):
        check_target(folder / "run.json")


def test_run_refuses_a_bad_target_before_running_and_survives_a_chdir(tmp_path: Path) -> None:
    workflow = tmp_path / "w.yaml"
    away = tmp_path / "away"
    away.mkdir()
    workflow.write_text(
        "name: moves\ntasks:\n"
        f"  move: {{run: faulty:chdir_away, with: {{to: {str(away)!r}}}}}\n"
        "  next: {run: builtin:echo, depends_on: [move]}\n",
        encoding="utf-8",
    )
    (tmp_path / "faulty.py").write_text((CORPUS / "faulty.py").read_text("utf-8"), "utf-8")
    command = [sys.executable, "-m", "harness_tui", "run", str(workflow), "--no-store", "-q"]
    bad = subprocess.run(
        [*command, "--export", "missing/run.json"], cwd=tmp_path, capture_output=True, text=True
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        f"error: cannot write missing/run.json: no folder {tmp_path / 'missing'}"
    ]
    good = subprocess.run(
        [*command, "--export", "run.json"], cwd=tmp_path, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stderr
    assert RunRecord.read(tmp_path / "run.json").document["status"] == "succeeded"
    assert not (away / "run.json").exists()


def test_a_device_or_a_pipe_is_written_into_never_replaced(tmp_path: Path) -> None:
    """``--export /dev/null`` (or ``-o`` a pipe): a rename over it would replace the device
    node with a file (as root, /dev/null itself)."""
    if os.geteuid() == 0:  # a null device of the test's own: never the machine's
        null = tmp_path / "null"
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        atomic_write(null, "{}")
        assert stat.S_ISCHR(os.stat(null).st_mode)
        null.unlink()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    atomic_write(fifo, "through the pipe")
    assert reader.communicate(timeout=10)[0] == b"through the pipe"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary file left


def test_a_pipe_nobody_reads_is_refused_not_waited_on_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from harness_tui import files as export_module
    from harness_tui.cli import cli

    monkeypatch.setattr(export_module, "PIPE_READER_WAIT", 0.0)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="it is a named pipe that no process reads"):
        atomic_write(fifo, "nobody listens")
    workflow = tmp_path / "w.yaml"
    workflow.write_text("name: w\ntasks:\n  a: {run: builtin:echo}\n", encoding="utf-8")
    export = tmp_path / "run.json"
    ran = CliRunner().invoke(cli, ["run", str(workflow), "--no-store", "--export", str(export)])
    assert ran.exit_code == 0, ran.output
    for args in (
        ["run", str(workflow), "--no-store", "-q", "--export", str(fifo)],
        ["report", str(export), "-o", str(fifo)],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2
        assert result.stderr.endswith(": it is a named pipe that no process reads\n")
        assert len(result.stderr.splitlines()) == 1
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
