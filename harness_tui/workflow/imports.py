"""Whether every ``run:`` and ``fallback:`` reference of a workflow imports.

Loading a workflow never imports its code (I6); this check does, on request
(``validate --imports``), because importing a module runs it.
"""

from __future__ import annotations

from .errors import Problem
from .loader import Workflow
from .refs import LazyCallable
from .yamlpos import compose

__all__ = ["import_problems"]


def import_problems(workflow: Workflow) -> list[Problem]:
    """Import each reference of ``workflow`` once; one problem per task field that fails.

    A Python-defined workflow was imported to be loaded, so its callables are already there
    and nothing is reported for it.
    """
    failures: dict[str, str | None] = {}
    found: list[tuple[str, str, str]] = []
    for node in workflow.graph.nodes.values():
        for field, fn in (("run", node.fn), ("fallback", node.fallback)):
            if not isinstance(fn, LazyCallable):
                continue
            if fn.ref not in failures:
                failures[fn.ref] = _import(fn)
            message = failures[fn.ref]
            if message is not None:
                found.append((node.name, field, message))
    if not found:
        return []
    located = compose(workflow.source)
    problems = []
    for task, field, message in found:
        line, column = located.position(("tasks", task, field))
        problems.append(Problem(workflow.path, line, column, f"task {task!r}: {message}"))
    return sorted(problems)


def _import(fn: LazyCallable) -> str | None:
    """None when ``fn`` resolves, else what went wrong (module code may raise anything)."""
    try:
        fn.resolve()
    except (Exception, SystemExit) as exc:  # the module's own code failed on import
        text = str(exc) if isinstance(exc, ImportError) else f"{type(exc).__name__}: {exc}"
        return text if text.startswith("cannot import") else f"cannot import {fn.ref!r}: {text}"
    return None
