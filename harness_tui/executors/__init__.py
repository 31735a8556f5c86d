"""Where attempts run: the public executor contract and the executors that ship with
harness-tui (docs/executors.md).

``from harness_tui.executors import Executor, Attempt, Outcome`` is all a third-party executor
needs; it publishes itself under the entry-point group ``harness_tui.executors``. The built-ins:
:mod:`.threads` (this process), :mod:`.dask` (a Dask cluster) and :mod:`.process` (process
isolation, a wrapper around whichever of them runs an attempt). :mod:`.registry` turns
``--executor NAME[=ARG]`` into one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..engine.attempt import Attempt, Executor, ExecutorError, Outcome, OutcomeKind
    from .registry import available, executor_from_option

_LAZY = {
    "Attempt": "..engine.attempt",
    "Executor": "..engine.attempt",
    "ExecutorError": "..engine.attempt",
    "Outcome": "..engine.attempt",
    "OutcomeKind": "..engine.attempt",
    "available": ".registry",
    "executor_from_option": ".registry",
}

__all__ = [
    "Attempt",
    "Executor",
    "ExecutorError",
    "Outcome",
    "OutcomeKind",
    "available",
    "executor_from_option",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [])
