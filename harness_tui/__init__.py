"""harness-tui: a deterministic workflow harness with a terminal workbench.

The public API is headless: importing it never imports a UI toolkit. Every name is
imported on first use, so a command pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from .engine import (
        CanonicalError,
        Clock,
        CycleError,
        DeterministicScheduler,
        Driver,
        FakeClock,
        GraphError,
        HarnessError,
        OnFailure,
        Plan,
        PlanStep,
        RecordedExecutor,
        ResumeError,
        Run,
        RunStatus,
        Status,
        Stop,
        StopReason,
        SystemClock,
        TaskFailedError,
        TaskGraph,
        TaskNode,
        TaskOrchestrator,
        TraceEvent,
        Trigger,
        canonical_json,
        compute_task_id,
        digest,
    )
    from .engine.diff import PlanDiff, plan_diff
    from .engine.inputs import TaskInputs
    from .engine.recorded_calls import CallMode, CallSession, recorded
    from .engine.state import Snapshot
    from .executors import Attempt, Executor, ExecutorError, Outcome, OutcomeKind
    from .executors.threads import SerialExecutor, ThreadExecutor
    from .harness import Harness
    from .records.errors import RecordError, StoreError
    from .records.export import RunRecord
    from .records.runs.divergence import TraceDiff, trace_diff
    from .records.runs.live import LiveRun
    from .records.runs.replay import replay
    from .records.store import RunStore
    from .workflow.errors import WorkflowError
    from .workflow.expressions import condition
    from .workflow.loader import Workflow, load_workflow, parse_workflow

from .version import __version__

_LAZY = {
    "CanonicalError": ".engine",
    "Clock": ".engine",
    "CycleError": ".engine",
    "DeterministicScheduler": ".engine",
    "Driver": ".engine",
    "FakeClock": ".engine",
    "GraphError": ".engine",
    "Harness": ".harness",
    "HarnessError": ".engine",
    "OnFailure": ".engine",
    "Plan": ".engine",
    "PlanStep": ".engine",
    "RecordedExecutor": ".engine",
    "ResumeError": ".engine",
    "Run": ".engine",
    "RunStatus": ".engine",
    "Attempt": ".executors",
    "Executor": ".executors",
    "ExecutorError": ".executors",
    "Outcome": ".executors",
    "OutcomeKind": ".executors",
    "SerialExecutor": ".executors.threads",
    "ThreadExecutor": ".executors.threads",
    "Status": ".engine",
    "Stop": ".engine",
    "StopReason": ".engine",
    "SystemClock": ".engine",
    "TaskFailedError": ".engine",
    "TaskGraph": ".engine",
    "TaskNode": ".engine",
    "TaskOrchestrator": ".engine",
    "TraceEvent": ".engine",
    "Trigger": ".engine",
    "canonical_json": ".engine",
    "compute_task_id": ".engine",
    "digest": ".engine",
    "debug": ".debugger",
    "PlanDiff": ".engine.diff",
    "plan_diff": ".engine.diff",
    "TaskInputs": ".engine.inputs",
    "CallMode": ".engine.recorded_calls",
    "CallSession": ".engine.recorded_calls",
    "recorded": ".engine.recorded_calls",
    "Snapshot": ".engine.state",
    "TraceDiff": ".records.runs.divergence",
    "trace_diff": ".records.runs.divergence",
    "RecordError": ".records.errors",
    "StoreError": ".records.errors",
    "RunRecord": ".records.export.record",
    "LiveRun": ".records.runs.live",
    "replay": ".records.runs.replay",
    "RunStore": ".records.store.run_store",
    "WorkflowError": ".workflow.errors",
    "condition": ".workflow.expressions",
    "Workflow": ".workflow.loader",
    "load_workflow": ".workflow.loader",
    "parse_workflow": ".workflow.loader",
}

__all__ = [
    "Attempt",
    "CallMode",
    "CallSession",
    "CanonicalError",
    "Clock",
    "CycleError",
    "DeterministicScheduler",
    "Driver",
    "Executor",
    "ExecutorError",
    "FakeClock",
    "GraphError",
    "Harness",
    "HarnessError",
    "LiveRun",
    "OnFailure",
    "Outcome",
    "OutcomeKind",
    "Plan",
    "PlanDiff",
    "PlanStep",
    "RecordError",
    "RecordedExecutor",
    "ResumeError",
    "Run",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "SerialExecutor",
    "Snapshot",
    "Status",
    "Stop",
    "StopReason",
    "StoreError",
    "SystemClock",
    "TaskFailedError",
    "TaskGraph",
    "TaskInputs",
    "TaskNode",
    "TaskOrchestrator",
    "ThreadExecutor",
    "TraceDiff",
    "TraceEvent",
    "Trigger",
    "Workflow",
    "WorkflowError",
    "__version__",
    "canonical_json",
    "compute_task_id",
    "condition",
    "debug",
    "digest",
    "load_workflow",
    "parse_workflow",
    "plan_diff",
    "recorded",
    "replay",
    "trace_diff",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [n for n in __all__ if n not in _LAZY])
