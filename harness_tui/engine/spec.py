"""A task's spec fields, named once: what a workflow file sets, a plan diff compares and the
inspector shows."""

from __future__ import annotations

from typing import Any

from .graph import TaskNode

__all__ = ["DEFAULT_ISOLATION", "SPEC_FIELDS", "TASK_FIELDS", "task_spec"]


def _ref(fn: Any, ref: str) -> str | None:
    if ref:
        return ref
    if fn is None:
        return None
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def task_spec(node: TaskNode) -> dict[str, Any]:
    """The fields that decide what a task does, as comparable JSON values.

    Args:
        node: the task.

    Returns:
        ``{field: value}`` in :data:`SPEC_FIELDS` order; callables appear as their
        ``module:function`` reference, dependencies sorted.
    """
    # The one spelling of the field names: SPEC_FIELDS below is read from this dict.
    return {
        "run": _ref(node.fn, node.ref),
        "depends_on": sorted(node.depends_on),
        "max_retries": node.max_retries,
        "retry_interval": float(node.retry_interval),
        # A number of seconds, however it was written (`5` in Python, `5.0` read from YAML).
        "timeout_seconds": None if node.timeout_seconds is None else float(node.timeout_seconds),
        "fallback": _ref(node.fallback, node.fallback_ref),
        "when": node.when_source or (None if node.when is None else _ref(node.when, "")),
        "trigger": node.trigger.value,
        "with": dict(node.params),
    }


SPEC_FIELDS: tuple[str, ...] = tuple(task_spec(TaskNode("_")))
"""The spec fields in display and diff order (``with`` is ``TaskNode.params``)."""

TASK_FIELDS: tuple[str, ...] = (*SPEC_FIELDS, "isolation", "description")
"""Every field a task sets in a workflow file: the spec fields, where its attempts run
(``in-process`` or ``process``: how, not what, so not diffed) and free text for people."""

DEFAULT_ISOLATION = "in-process"
