"""``harness_tui.debug(harness, payload)``: open the workbench on a harness from a script.

Like :func:`breakpoint`: the script stops, the workbench shows the harness's DAG and plan, and
you step, inspect and travel in time; quitting returns the run (quit early, it is
``cancelled``: the tasks not run are recorded so).
Textual is imported only here, only when the workbench opens.
"""

from __future__ import annotations

import sys
from typing import Any

from .engine.errors import HarnessError
from .engine.graph import TaskGraph
from .engine.harness import Harness
from .engine.orchestrator import OnFailure, Run, TaskOrchestrator

__all__ = ["debug"]


def debug(
    harness: Harness | TaskGraph,
    payload: Any = None,
    *,
    headless: bool = False,
    name: str = "debug",
    on_failure: OnFailure | str = OnFailure.STOP,
    workers: int | None = None,
) -> Run:
    """Step through ``harness`` for ``payload`` in the workbench; return the run.

    Args:
        harness: a :class:`Harness` or a :class:`TaskGraph`.
        payload: the input payload (default ``{}``).
        headless: run to the end without a terminal instead (for CI and tests).
        name: the workflow's name in the workbench and in exports.
        on_failure: ``stop`` or ``continue``.
        workers: tasks run at once (default: the harness's own ``workers``, else 1).

    Raises:
        HarnessError: there is no terminal to open the workbench in (and not ``headless``).
    """
    graph = harness.graph if isinstance(harness, Harness) else harness
    value = {} if payload is None else payload
    if workers is None:
        workers = harness.workers if isinstance(harness, Harness) else 1
    if headless:
        orchestrator = TaskOrchestrator(graph, on_failure=on_failure, workers=workers)
        return orchestrator.start(value).run_to_end()
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise HarnessError(
            "debug(): no terminal to open the workbench in (stdin or stdout is not a TTY); "
            "pass headless=True to run to the end instead"
        )
    from .records.runs.settings import RunSettings
    from .tui.app import HarnessApp
    from .tui.session import Session
    from .workflow.python_source import graph_workflow

    settings = RunSettings(workers=workers)
    session = Session(graph_workflow(graph, value, name, on_failure), value, settings=settings)
    HarnessApp(session, None, settings=settings).run()
    run = session.run
    if not run.finished:
        # Quit early: the run is stopped as a second Ctrl+C stops one (the tasks not run are
        # recorded cancelled, cleanups included: the user left), so that what this returns
        # never says it is still running.
        run.cancel()
        run.cancel()
        run.run_to_end()
    return run
