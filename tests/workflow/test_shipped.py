"""Each shipped workflow runs end to end with the results it is meant to show."""

from __future__ import annotations

from pathlib import Path

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.events import RunStatus
from harness_tui.engine.orchestrator import Run, TaskOrchestrator
from harness_tui.workflow.loader import load_workflow


def run_file(path: Path) -> Run:
    workflow = load_workflow(path)
    return (
        TaskOrchestrator(workflow.graph, clock=FakeClock(), on_failure=workflow.on_failure)
        .start(workflow.payload)
        .run_to_end()
    )


def finals(run: Run) -> dict[str, tuple[str, int]]:
    out = {}
    for event in run.events:
        out[event.task] = (event.status.value, event.attempt)
    return out


def test_user_profile(workflows: Path) -> None:
    run = run_file(workflows / "user_profile.yaml")
    assert run.status is RunStatus.SUCCEEDED
    assert run.results["compose_response"] == {
        "final": {"user_id": "u001", "level": "gold", "quota": 100}
    }


def test_agent_triage_shows_retries_timeout_fallback_condition(workflows: Path) -> None:
    run = run_file(workflows / "agent_triage.yaml")
    states = finals(run)
    assert states["draft_reply"] == ("succeeded", 3)  # two simulated overloads, then a reply
    assert states["check_policy"] == ("fallback", 3)  # both attempts timed out
    assert [e.status.value for e in run.events if e.task == "check_policy"].count("timed_out") == 2
    assert states["escalate"][0] == "succeeded"  # the ticket is urgent
    final = run.results["finalize"]
    assert final["send"] is False and final["escalated"] is True
    assert final["reply"].startswith("[friendly] Thanks for reaching out about outage.")
    assert run.status is RunStatus.SUCCEEDED


def test_agent_triage_skips_escalation_for_calm_tickets(workflows: Path) -> None:
    workflow = load_workflow(workflows / "agent_triage.yaml")
    payload = {**workflow.payload, "ticket": "How do I get a refund for last month's invoice?"}
    run = (
        TaskOrchestrator(workflow.graph, clock=FakeClock(), on_failure="continue")
        .start(payload)
        .run_to_end()
    )
    assert finals(run)["escalate"] == ("skipped", 0)
    assert run.results["finalize"]["escalated"] is False
    assert "Refunds are issued" in run.results["finalize"]["reply"]


def test_etl_fanout(workflows: Path) -> None:
    run = run_file(workflows / "etl_fanout.yaml")
    assert run.status is RunStatus.SUCCEEDED
    assert run.results["quality_gate"] == {"rows": 1200, "partitions": 12, "ok": True}
    assert run.results["report"]["rows"] == 1200
    assert sum(1 for step in run.plan if step.level == 1) == 12


def test_release_versions_both_run(workflows: Path) -> None:
    for name in ("release_v1.yaml", "release_v2.yaml"):
        run = run_file(workflows / name)
        assert run.status is RunStatus.SUCCEEDED
        assert run.results["deploy_prod"] == {"step": "deploy", "env": "production"}
