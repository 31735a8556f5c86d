"""Workflow files: YAML in, engine objects out. Loading never runs user code (I6).

Names are imported on first use (the loader brings PyYAML, pydantic and JMESPath).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import Problem, WorkflowError
    from .limits import Limits
    from .loader import Workflow, load_workflow, parse_workflow

_LAZY = {
    "Limits": ".limits",
    "Problem": ".errors",
    "WorkflowError": ".errors",
    "Workflow": ".loader",
    "load_workflow": ".loader",
    "parse_workflow": ".loader",
}

__all__ = [
    "Limits",
    "Problem",
    "Workflow",
    "WorkflowError",
    "load_workflow",
    "parse_workflow",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [])
