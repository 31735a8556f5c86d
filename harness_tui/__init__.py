"""harness-tui: a deterministic workflow harness with a terminal workbench.

The public API is headless: importing it never imports a UI toolkit.
"""

from .engine.canonical import CanonicalError, canonical_json, digest, task_id
from .engine.clock import Clock, FakeClock, SystemClock
from .engine.events import RunStatus, Status, TraceEvent
from .engine.executors import RecordedExecutor, SerialExecutor
from .engine.graph import GraphError, TaskGraph, TaskNode, Trigger
from .engine.harness import Harness
from .engine.orchestrator import OnFailure, Run, TaskOrchestrator
from .engine.scheduler import DeterministicScheduler, Plan, PlanStep

__version__ = "0.1.0"

__all__ = [
    "CanonicalError",
    "Clock",
    "DeterministicScheduler",
    "FakeClock",
    "GraphError",
    "Harness",
    "OnFailure",
    "Plan",
    "PlanStep",
    "RecordedExecutor",
    "Run",
    "RunStatus",
    "SerialExecutor",
    "Status",
    "SystemClock",
    "TaskGraph",
    "TaskNode",
    "TaskOrchestrator",
    "TraceEvent",
    "Trigger",
    "__version__",
    "canonical_json",
    "digest",
    "task_id",
]
