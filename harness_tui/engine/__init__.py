"""The pure core: graph, deterministic scheduler, stepping orchestrator, trace.

Standard library only. Nothing here prints, exits, reads files or imports a UI.
"""

from __future__ import annotations

from .canonical import CanonicalError, canonical_json, compute_task_id, digest
from .clock import Clock, FakeClock, SystemClock
from .driver import Driver, Stop, StopReason
from .errors import HarnessError, TaskFailedError
from .events import RunStatus, Status, TraceEvent
from .executors import RecordedExecutor, SerialExecutor
from .graph import CycleError, GraphError, TaskGraph, TaskNode, Trigger
from .harness import Harness
from .inputs import TaskInputs
from .orchestrator import OnFailure, Run, TaskOrchestrator
from .resume import ResumeError
from .scheduler import DeterministicScheduler, Plan, PlanStep
from .state import Snapshot

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
    "SerialExecutor",
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
