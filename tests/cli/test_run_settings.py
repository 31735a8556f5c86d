"""One RunSettings per command: every command that runs code takes the same options from
``cli/options.py`` and hands the run service and the workbench one value (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.executors.process import ProcessExecutor
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui.session import open_session

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflows" / "etl_fanout.yaml"
RUNS_CODE = ("open", "run", "resume", "rerun", "verify", "golden")


def test_every_command_that_runs_code_takes_the_same_run_options() -> None:
    context = click.Context(cli)
    for name in RUNS_CODE:
        command = cli.get_command(context, name)
        assert command is not None, name
        options = {opt for param in command.params for opt in param.opts}
        assert {"--workers", "--executor", "--isolation"} <= options, name


def _captured_settings(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> RunSettings:
    seen: dict[str, Any] = {}

    def fake_create_app(path: str | None, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr("harness_tui.tui.app.create_app", fake_create_app)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    settings = seen["settings"]
    assert isinstance(settings, RunSettings)
    return settings


def test_open_takes_isolation_and_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _captured_settings(
        monkeypatch, ["open", str(WORKFLOW), "--isolation", "process", "--workers", "3"]
    )
    assert settings.isolation == "process" and settings.workers == 3
    assert settings.recording is None


def test_a_workbench_opened_with_process_isolation_runs_every_task_in_a_child() -> None:
    isolated = open_session(str(WORKFLOW), None, RunSettings(isolation="process"))
    assert isinstance(isolated.run.orchestrator.executor, ProcessExecutor)
    plain = open_session(str(WORKFLOW), None, RunSettings())
    assert not isinstance(plain.run.orchestrator.executor, ProcessExecutor)
    isolated.live.drive()
    plain.live.drive()
    assert isolated.run.status.value == "succeeded"
    assert isolated.run.digests() == plain.run.digests()


def test_rerun_takes_workers_and_reaches_the_serial_digest(tmp_path: Path) -> None:
    runner = CliRunner()
    first = tmp_path / "first.json"
    ran = runner.invoke(cli, ["run", str(WORKFLOW), "--no-store", "--export", str(first), "-q"])
    assert ran.exit_code == 0, ran.output
    task = json.loads(first.read_text())["plan"][1]["task"]
    serial, parallel = tmp_path / "serial.json", tmp_path / "parallel.json"
    for target, extra in ((serial, []), (parallel, ["--workers", "4", "--isolation", "process"])):
        args = ["rerun", str(first), "--from", task, "--no-store", "--export", str(target), "-q"]
        result = runner.invoke(cli, [*args, *extra])
        assert result.exit_code == 0, result.output
    digests = [json.loads(path.read_text())["digests"] for path in (serial, parallel)]
    assert digests[0] == digests[1]


def test_volatile_without_record_is_one_line_where_a_command_records() -> None:
    result = CliRunner().invoke(cli, ["run", str(WORKFLOW), "--no-store", "--volatile", "$.a"])
    assert result.exit_code == 2 and "add --record" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "address", ["foo", "http://x:1", "tls://127.0.0.1:1", "WSS://h:1", "\x1b[2J"]
)
def test_a_dask_address_dask_cannot_read_is_one_line(address: str) -> None:
    # Before: Dask's ValueError (or TypeError, for TLS) from parsing it, as a traceback.
    pytest.importorskip("distributed")
    args = ["run", str(WORKFLOW), "--no-store", "-q", "--executor", f"dask={address}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "\x1b" not in result.stderr
    assert (
        result.stderr.startswith("error: --executor dask=") and "(tcp://HOST:PORT)" in result.stderr
    )


@pytest.mark.slow
def test_rerun_on_dask_with_four_workers_reaches_the_serial_digest(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    runner = CliRunner()
    first = tmp_path / "first.json"
    ran = runner.invoke(cli, ["run", str(WORKFLOW), "--no-store", "--export", str(first), "-q"])
    assert ran.exit_code == 0, ran.output
    task = json.loads(first.read_text())["plan"][1]["task"]
    fork = tmp_path / "fork.json"
    args = ["rerun", str(first), "--from", task, "--no-store", "--export", str(fork), "-q"]
    result = runner.invoke(cli, [*args, "--workers", "4", "--executor", "dask"])
    assert result.exit_code == 0, result.output
    serial = tmp_path / "serial.json"
    again = runner.invoke(cli, [*args[:-3], "--export", str(serial), "-q"])
    assert again.exit_code == 0, again.output
    assert json.loads(fork.read_text())["digests"] == json.loads(serial.read_text())["digests"]


def test_a_dask_client_whose_event_loop_does_not_start_is_one_line() -> None:
    pytest.importorskip("distributed")
    from harness_tui.executors.dask import DaskError, _client

    def stalled(address: str, timeout: str) -> None:
        raise AssertionError  # what Dask raises when its loop thread has not started in 10 s

    with pytest.raises(DaskError, match="could not start its event loop within 10 s"):
        _client(stalled, "tcp://127.0.0.1:8786")
