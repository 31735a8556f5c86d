from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The suite never reads the user's config.toml nor remembers a theme in their state file; the
# tests that are about settings name their own files.
os.environ["HARNESS_TUI_CONFIG"] = ""
os.environ["HARNESS_TUI_STATE"] = ""

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / "workflows"


@pytest.fixture
def workflows() -> Path:
    return WORKFLOWS


def invoke(*args: str) -> tuple[int, str, str]:
    """A command run in this process: its exit code, stdout and stderr (never a traceback)."""
    from click.testing import CliRunner

    from harness_tui.cli import cli

    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


def calls_of(module: str) -> list[str]:
    """What the task module named ``module`` logged in its ``CALLS`` since the last look, in
    the order of the calls (the log is emptied)."""
    recorded: list[str] = sys.modules[module].CALLS
    seen = list(recorded)
    recorded.clear()
    return seen
