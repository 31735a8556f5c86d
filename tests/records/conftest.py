"""Fixtures of the records tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """The export document of a run of agent_triage (failures, fallbacks, timeouts)."""
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure
    )
    run = orchestrator.start(workflow.payload).run_to_end()
    return RunRecord.from_run(run, workflow).document
