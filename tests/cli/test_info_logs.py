"""A task's INFO records reach its log (``run --logs``, the export) by default, while the
handler the user installed at WARNING still receives no INFO; ``log_level`` changes it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "tests" / "cli" / "data" / "info_logs.yaml"


def run_logs(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", "run", str(WORKFLOW), "--no-store", "--logs", "-q"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HARNESS_TUI_CONFIG": "", **env},
        cwd=ROOT,
        timeout=60,
    )


def test_info_is_in_the_task_log_and_not_in_the_users_warning_handler() -> None:
    result = run_logs()
    assert result.returncode == 0, result.stderr
    assert "news#1 | INFO tasks.news: fetched 3 rows" in result.stderr
    assert "news#1 | WARNING tasks.news: quota at 80%" in result.stderr
    # The user's handler saw the WARNING (it writes to the real stderr), never the INFO.
    assert "USER-HANDLER WARNING quota at 80%" in result.stderr
    assert "USER-HANDLER INFO" not in result.stderr


def test_the_capture_level_comes_from_the_settings() -> None:
    result = run_logs(HARNESS_TUI_LOG_LEVEL="warning")
    assert result.returncode == 0, result.stderr
    assert "fetched 3 rows" not in result.stderr
    assert "news#1 | WARNING tasks.news: quota at 80%" in result.stderr
