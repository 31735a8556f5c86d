"""Fixtures of the records tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export import RunRecord
from harness_tui.records.export import beside as beside_module
from harness_tui.records.export.beside import Beside
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


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every file is large enough to be read beside, on a machine with a core free; what
    each child answered, in order."""
    monkeypatch.setattr(beside_module, "BESIDE_BYTES", 1)
    monkeypatch.setattr(beside_module, "core_free", lambda: True)
    given: list[object] = []
    outcome = Beside.outcome

    def recorded(self: Beside) -> object:
        answer = outcome(self)
        given.append(answer)
        return answer

    monkeypatch.setattr(Beside, "outcome", recorded)
    return given
