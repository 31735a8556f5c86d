"""``replay`` starts on what it uses: a sound export is checked without pydantic, and a replay
imports neither asyncio (no async task runs) nor ssl (the network is not closed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import sys
from harness_tui.cli import cli
try:
    cli(["replay", sys.argv[1]])
except SystemExit as exc:
    assert exc.code == 0, exc.code
print(sorted(m for m in ("pydantic", "asyncio", "ssl") if m in sys.modules), file=sys.stderr)
"""


def test_replay_imports_no_schema_asyncio_or_ssl(tmp_path: Path) -> None:
    export = tmp_path / "run.json"
    workflow = ROOT / "workflows/agent_triage.yaml"
    command = [sys.executable, "-m", "harness_tui", "run", str(workflow), "--no-store", "-q"]
    subprocess.run([*command, "--export", str(export)], check=True, capture_output=True)
    done = subprocess.run(
        [sys.executable, "-c", CODE, str(export)], capture_output=True, text=True, check=True
    )
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
