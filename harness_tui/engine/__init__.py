"""The pure core: graph, deterministic scheduler, stepping orchestrator, trace.

Standard library only. Nothing here prints, exits, reads files or imports a UI. The names
below are imported on first use: a command that only loads a workflow does not pay for the
orchestrator, its executors or asyncio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .canonical import CanonicalError, canonical_json, compute_task_id, digest
    from .clock import Clock, FakeClock, SystemClock
    from .driver import Driver, Stop, StopReason
    from .errors import HarnessError, TaskFailedError
    from .events import RunStatus, Status, TraceEvent
    from .graph import CycleError, GraphError, TaskGraph, TaskNode, Trigger
    from .harness import Harness
    from .inputs import TaskInputs
    from .orchestrator import OnFailure, Run, TaskOrchestrator
    from .recorded import RecordedExecutor
    from .resume import ResumeError
    from .scheduler import DeterministicScheduler, Plan, PlanStep
    from .state import Snapshot

_LAZY = {
    "CanonicalError": ".canonical",
    "canonical_json": ".canonical",
    "compute_task_id": ".canonical",
    "digest": ".canonical",
    "Clock": ".clock",
    "FakeClock": ".clock",
    "SystemClock": ".clock",
    "Driver": ".driver",
    "Stop": ".driver",
    "StopReason": ".driver",
    "HarnessError": ".errors",
    "TaskFailedError": ".errors",
    "RunStatus": ".events",
    "Status": ".events",
    "TraceEvent": ".events",
    "RecordedExecutor": ".recorded",
    "CycleError": ".graph",
    "GraphError": ".graph",
    "TaskGraph": ".graph",
    "TaskNode": ".graph",
    "Trigger": ".graph",
    "Harness": ".harness",
    "TaskInputs": ".inputs",
    "OnFailure": ".orchestrator",
    "Run": ".orchestrator",
    "TaskOrchestrator": ".orchestrator",
    "ResumeError": ".resume",
    "DeterministicScheduler": ".scheduler",
    "Plan": ".scheduler",
    "PlanStep": ".scheduler",
    "Snapshot": ".state",
}

__all__ = [
    "CanonicalError",
    "Clock",
    "CycleError",
    "DeterministicScheduler",
    "Driver",
    "FakeClock",
    "GraphError",
    "Harness",
    "HarnessError",
    "OnFailure",
    "Plan",
    "PlanStep",
    "RecordedExecutor",
    "ResumeError",
    "Run",
    "RunStatus",
    "Snapshot",
    "Status",
    "Stop",
    "StopReason",
    "SystemClock",
    "TaskFailedError",
    "TaskGraph",
    "TaskInputs",
    "TaskNode",
    "TaskOrchestrator",
    "TraceEvent",
    "Trigger",
    "canonical_json",
    "compute_task_id",
    "digest",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [])
