"""Writing exports: the document of a run, its checksum, and its text."""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from ...engine.canonical import digest
from ...engine.capture import UNATTRIBUTED, AttemptLog
from ...engine.events import Status, TraceEvent
from ...engine.graph import TaskGraph
from ...engine.orchestrator import Run
from ...version import __version__
from ...workflow.loader import Workflow
from ...workflow.python_source import python_spec
from .model import FORMAT, FORMAT_VERSION, FORMAT_VERSION_IO

__all__ = ["checksum", "export_name", "export_text", "run_document"]

_PACKAGES = ("textual", "rich", "pyyaml", "click", "pydantic", "jmespath")


def export_name(workflow_name: str, run_digest: str) -> str:
    """The default file name of an export: ``<workflow>-<first 12 of the run digest>.json``."""
    return f"{workflow_name}-{run_digest[:12]}.json"


def _environment() -> dict[str, Any]:
    packages: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": packages,
    }


def _log_json(run: Run, task: str, attempt: int) -> dict[str, Any] | None:
    return _log_dict(run.log(task, attempt))


def _log_dict(log: AttemptLog | None) -> dict[str, Any] | None:
    if log is None or not (log.text or log.truncated):
        return None
    return {"text": log.text, "truncated": log.truncated}


def _attempts(run: Run, graph: TaskGraph, logs: bool = True) -> list[dict[str, Any]]:
    """Each attempt as it really ran (export 1.1): from its ``running`` event to its final one,
    with what it printed or logged (``log`` is None when it wrote nothing, or ``logs`` is off).

    A fallback has no ``running`` event; its start is its final event's ``started_at``.
    """
    started: dict[tuple[str, int], TraceEvent] = {}
    recordings = run.recordings()
    attempts = []
    for event in run.events:
        if event.attempt == 0:
            continue
        key = (event.task, event.attempt)
        if event.status is Status.RUNNING:
            started[key] = event
            continue
        opened = started.pop(key, None)
        fallback = event.attempt > graph[event.task].max_retries + 1
        attempts.append(
            {
                "task": event.task,
                "attempt": event.attempt,
                "kind": "fallback" if fallback else "task",
                "started_at": event.started_at,
                "ended_at": event.ended_at,
                "wall_started": opened.wall if opened is not None else None,
                "wall_ended": event.wall,
                "worker": event.worker,
                "log": _log_json(run, event.task, event.attempt) if logs else None,
            }
        )
        exchanges = recordings.get(key)
        if exchanges:
            attempts[-1]["io"] = [exchange.to_json() for exchange in exchanges]
    return attempts


def _additions_1_1(
    run: Run, workflow: Workflow, forked_from: tuple[str, str] | None
) -> dict[str, Any]:
    """The fields export 1.1 adds beside the trace (``redaction`` is set by redacting)."""
    return {
        "attempts": _attempts(run, workflow.graph),
        "forked_from": (
            None if forked_from is None else {"run_digest": forked_from[0], "task": forked_from[1]}
        ),
        "redaction": None,
        "spec": python_spec(workflow),
        "unattributed_log": _log_dict(run.unattributed_log()),
    }


def _additions_1_2(run: Run) -> dict[str, Any]:
    """Export 1.2: the exchanges of threads outside any attempt (each attempt's own are in
    ``attempts[].io``); nothing when the run recorded no calls, which is then a 1.1 export."""
    recordings = run.recordings()
    if not recordings:
        return {}
    stray = recordings.get(UNATTRIBUTED, [])
    return {
        "format_version": FORMAT_VERSION_IO,
        "unattributed_io": [exchange.to_json() for exchange in stray],
    }


def checksum(document: Mapping[str, Any]) -> str:
    return digest({k: v for k, v in document.items() if k != "checksum"})


_FIRST_KEYS = ("format", "format_version")


def export_text(document: Mapping[str, Any]) -> str:
    """The export text: ``format`` and ``format_version`` first, so that a sniffer reading
    the head of a large file finds them; every other key sorted (the checksum is over
    canonical JSON, so the order of keys in the file does not change it)."""
    rest = {k: v for k, v in document.items() if k not in _FIRST_KEYS}
    body = json.dumps(rest, indent=2, sort_keys=True, ensure_ascii=False)
    first = [
        f"  {json.dumps(k)}: {json.dumps(document[k], ensure_ascii=False)}"
        for k in _FIRST_KEYS
        if k in document
    ]
    if not first:
        return body + "\n"
    if not rest:
        return "{\n" + ",\n".join(first) + "\n}\n"
    return "{\n" + ",\n".join(first) + ",\n" + body[2:] + "\n"


def run_document(
    run: Run,
    workflow: Workflow,
    *,
    run_id: str | None,
    status: str | None,
    forked_from: tuple[str, str] | None,
    environment: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The export document of a run (finished or not) with its workflow, before redaction
    and without its checksum (see :meth:`.record.RunRecord.from_run`)."""
    document: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool": {"name": "harness-tui", "version": __version__},
        "run_id": run_id,
        "workflow": {
            "name": workflow.name,
            "path": workflow.path,
            "source": workflow.source,
            "digest": workflow.digest,
        },
        "payload": run.payload,
        "plan": run.plan.to_json(),
        "trace": run.canonical_trace(),
        "results": run.results,
        "status": status or run.status.value,
        "digests": run.digests(),
        "redacted": [],
        "timings": [event.timing() for event in run.events],
        "environment": dict(environment) if environment is not None else _environment(),
        **_additions_1_1(run, workflow, forked_from),
        **_additions_1_2(run),
    }
    if run.plan.scheduler is not None:  # only then: every other export stays as it was
        document["scheduler"] = run.plan.scheduler
    return document
