"""What the served process runs, and what ``harness-tui serve`` refuses before serving."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_tui.serve.command import Target, app_command

ROOT = Path(__file__).resolve().parents[2]


def test_the_app_runs_from_an_argument_list_the_file_one_argument() -> None:
    name = "-odd name; $(touch x) 'q'.yaml"
    command = app_command(Target(file=name, store="s.db"), python="py")
    assert command == ["py", "-m", "harness_tui", "open", "--store", "s.db", "--", name]


def test_no_file_runs_what_the_bare_command_opens() -> None:
    assert app_command(Target(), python="py") == ["py", "-m", "harness_tui"]
    assert app_command(Target(no_store=True), python="py")[3:] == ["--no-store"]


def test_replay_is_the_read_only_viewer() -> None:
    command = app_command(Target(file="run.json", replay=True), python="py")
    assert command == ["py", "-m", "harness_tui", "show", "--read-only", "--", "run.json"]


def _serve(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", "serve", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--host", "0.0.0.0"], "not loopback"),  # the network needs --expose
        (["--host", "192.0.2.1"], "add --expose"),
        (["--replay"], "--replay needs a run export"),
        (["--replay", "workflows/etl_fanout.yaml"], "not a workflow file"),
        (["--allow-host", "a/b"], "--allow-host"),
        (["no-such-file.yaml"], "no-such-file.yaml"),
    ],
)
def test_serve_refuses_with_one_line_and_exit_2(args: list[str], says: str) -> None:
    done = _serve(*args, "--port", "0")
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # no URL was printed: nothing listens


def test_a_network_address_needs_expose_and_is_warned_about() -> None:
    # 192.0.2.1 is a documentation address: never this machine's, so binding fails and
    # nothing listens; the warning comes first.
    done = _serve("--host", "192.0.2.1", "--expose", "--port", "0")
    assert done.returncode == 2
    warning, error = done.stderr.splitlines()[:2]
    assert warning.startswith("warning: serving on 192.0.2.1 over plain HTTP")
    assert error.startswith("error: cannot listen on 192.0.2.1:0")


def test_without_the_web_extra_serve_says_how_to_install_it() -> None:
    code = (
        "import sys; sys.modules['textual_serve'] = None\n"  # as if not installed
        "from harness_tui.cli import main; sys.argv = ['harness-tui', 'serve']; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "pip install 'harness-tui[web]'" in done.stderr and "Traceback" not in done.stderr
