"""What an export of a run holds: its document, before redaction and without its checksum
(:func:`run_document`), the long arrays as :class:`Rows` made when written, the results as
:class:`Results` read when asked for, and the file name an export gets."""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain, filterfalse, repeat
from operator import attrgetter, is_not
from typing import Any, overload

from ...engine.capture import UNATTRIBUTED, AttemptLog
from ...engine.events import Status, TraceEvent
from ...engine.graph import TaskGraph
from ...engine.orchestrator import Run
from ...engine.scheduler import PlanStep
from ...version import __version__
from ...workflow.loader import Workflow
from ...workflow.python_source import python_spec
from .fast import plain_times, values_of
from .version import FORMAT, FORMAT_VERSION, FORMAT_VERSION_IO

__all__ = ["Results", "Rows", "export_name", "plain", "run_document"]

_PACKAGES = ("textual", "rich", "pyyaml", "click", "pydantic", "jmespath")


def export_name(workflow_name: str, run_digest: str) -> str:
    """The default file name of an export: ``<workflow>-<first 12 of the run digest>.json``."""
    return f"{workflow_name}-{run_digest[:12]}.json"


def _environment() -> dict[str, Any]:
    from importlib import metadata  # 20 ms to import: only when an export is written

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


def _log_dict(log: AttemptLog | None) -> dict[str, Any] | None:
    if log is None or not (log.text or log.truncated):
        return None
    return {"text": log.text, "truncated": log.truncated}


def _attempts(run: Run, events: Sequence[TraceEvent], graph: TaskGraph, plain: bool) -> Rows:
    """Each attempt as it really ran (export 1.1): from its ``running`` event to its final one,
    with what it printed or logged (``log`` is None when it wrote nothing), as :class:`Rows`
    made when written, from ``events``, the run's trace as of now (``plain``: the events'
    times are finite numbers).

    A fallback has no ``running`` event; its start is its final event's ``started_at``.
    """
    # As of now, as the events, and without holding the run: what an ended attempt wrote
    # and was answered is whole. A task's attempts are numbered once in a trace (a resumed
    # run drops an unfinished task's events), so each start is found by its key.
    recordings, logs = run.recordings(), run.logs()
    running = Status.RUNNING
    walls: dict[tuple[str, int], float | None] = {}  # when each attempt was seen to start
    ended: list[TraceEvent] = []
    add = ended.append
    for event in events:
        if event.status is running:
            walls[event.task, event.attempt] = event.wall
        elif event.attempt:
            add(event)
    nodes = graph.nodes
    # No attempt up to the fewest any task has is a fallback: only those past it are looked
    # up (a lookup of the task's node a record took a third of the attempts' time).
    fewest = min(map(_RETRIES, nodes.values()), default=0) + 1

    def attempt(event: TraceEvent) -> dict[str, Any]:
        key = (task, number) = (event.task, event.attempt)
        fallback = number > fewest and number > nodes[task].max_retries + 1
        made = {
            "task": task,
            "attempt": number,
            "kind": "fallback" if fallback else "task",
            "started_at": event.started_at,
            "ended_at": event.ended_at,
            "wall_started": walls.get(key),
            "wall_ended": event.wall,
            "worker": event.worker,
            "log": _log_dict(logs.get(key)) if logs else None,
        }
        exchanges = recordings.get(key) if recordings else None
        if exchanges:
            made["io"] = [exchange.to_json() for exchange in exchanges]
        return made

    # A record unless it has a log or recorded calls (most runs: none at all).
    logged = frozenset(key for key, log in logs.items() if log.text or log.truncated)
    flat: Callable[[TraceEvent], bool] | None = None
    if plain and not recordings:
        flat = _always if not logged else lambda event: (event.task, event.attempt) not in logged
    return Rows(ended, attempt, flat, finite=plain)  # their floats are the events' times


def _additions_1_1(
    run: Run,
    events: Sequence[TraceEvent],
    workflow: Workflow,
    forked_from: tuple[str, str] | None,
    plain: bool,
) -> dict[str, Any]:
    """The fields export 1.1 adds beside the trace (``redaction`` is set by redacting)."""
    return {
        "attempts": _attempts(run, events, workflow.graph, plain),
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


class Rows(Sequence[dict[str, Any]]):
    """A long array of an export made from a run (its plan, trace or timings): each member is
    made when it is asked for, from the run's own record of it, so that writing the export
    holds a run of them at a time, not some 500,000 objects (about 160 MB at 100,000 tasks).
    :attr:`.record.RunRecord.document` gives plain lists (:func:`plain`)."""

    __slots__ = ("_flat", "_items", "_make", "finite")

    def __init__(
        self,
        items: Sequence[Any],
        make: Callable[[Any], dict[str, Any]],
        flat: Callable[[Any], bool] | None = None,
        *,
        finite: bool = False,
    ) -> None:
        self._items = items
        self._make = make
        self._flat = flat
        self.finite = finite
        """Every float in the members is known to be finite (the writer may then take
        orjson's text of them, see :mod:`.fast`)."""

    def flat(self, start: int, stop: int) -> bool:
        """Whether the members ``start:stop`` are known to be records (non-empty objects of
        scalars under string keys) without looking at them: ``flat`` says so of the item each
        is made from (an event without an error; a plan row always)."""
        known = self._flat
        return known is _always or (known is not None and all(map(known, self._items[start:stop])))

    def unflat(self) -> Iterator[dict[str, Any]]:
        """The members not known to be records (see :meth:`flat`): those that may nest."""
        known = self._flat
        if known is _always:  # a plan's rows, or times a clock gave as numbers: no look
            return iter(())
        return map(self._make, self._items if known is None else filterfalse(known, self._items))

    @property
    def source(self) -> Sequence[Any]:
        """The run's own records the members are made from (a trace's events)."""
        return self._items

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return list(map(self._make, self._items[index]))
        return self._make(self._items[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(self._make, self._items)


class Results(Mapping[str, Any]):
    """A run's results as its export holds them: the run's committed outputs, kept as their
    canonical JSON texts (``texts``, by task, in plan order), which the writer writes as
    they are (:func:`.fast.object_both`); their values are read when one is asked for, all
    at once (:func:`.fast.values_of`), and kept. :func:`plain` makes them a dict."""

    __slots__ = ("_values", "texts")

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self._values: dict[str, Any] | None = None

    def read(self) -> dict[str, Any]:
        """The value of each output, by task, in plan order (read once)."""
        if self._values is None:
            self._values = values_of(self.texts)
        return self._values

    def __getitem__(self, task: str) -> Any:
        return self.read()[task]

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def __contains__(self, task: object) -> bool:
        return task in self.texts


_TIMES = attrgetter("started_at", "ended_at", "wall")
_ERROR = attrgetter("error")
_RETRIES = attrgetter("max_retries")


def _always(_item: Any) -> bool:
    return True


def _without_error(event: TraceEvent) -> bool:
    return event.error is None


def _plan_row(step: PlanStep) -> dict[str, Any]:
    """``step._asdict()``, in half the time (a plan of 100,000 tasks has as many rows)."""
    index, task, task_id, level = step
    return {"index": index, "task": task, "task_id": task_id, "level": level}


def plain(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its :class:`Rows` made into lists and its :class:`Results` into a
    dict (the same dict if it has neither)."""
    if not any(type(value) in _LAZY for value in document.values()):
        return document
    return {k: _plain_value(v) for k, v in document.items()}


_LAZY = (Rows, Results)


def _plain_value(value: Any) -> Any:
    kind = type(value)
    if kind is Rows:
        return list(value)
    if kind is Results:
        return value.read()
    return value


def run_document(
    run: Run,
    workflow: Workflow,
    *,
    run_id: str | None,
    status: str | None,
    forked_from: tuple[str, str] | None,
    environment: Mapping[str, Any] | None,
    outputs: dict[str, str],
) -> dict[str, Any]:
    """The export document of a run (finished or not) with its workflow, before redaction
    and without its checksum (see :meth:`.record.RunRecord.from_run`). Its plan, trace and
    timings are :class:`Rows` of the run's plan and of its events as they are now; its
    results the :class:`Results` of ``outputs``, the run's committed texts as of now
    (``Run.output_texts``)."""
    events = tuple(run.events)  # the trace as of now: a paused run may go on
    # The floats of the timings and attempts are the events' times: records of finite
    # numbers, unless a clock gave something else (then they are looked at when written).
    plain = plain_times(chain.from_iterable(map(_TIMES, events)))
    # A trace's rows are records but for an error: when none has one, none is looked at.
    failed = any(map(is_not, map(_ERROR, events), repeat(None)))
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
        "plan": Rows(run.plan.steps, _plan_row, _always, finite=True),  # no float
        "trace": Rows(
            events, TraceEvent.canonical, _without_error if failed else _always, finite=True
        ),  # no float
        "results": Results(outputs),
        "status": status or run.status.value,
        "digests": run.digests(),
        "redacted": [],
        "timings": Rows(events, TraceEvent.timing, _always if plain else None, finite=plain),
        "environment": dict(environment) if environment is not None else _environment(),
        **_additions_1_1(run, events, workflow, forked_from, plain),
        **_additions_1_2(run),
    }
    if run.plan.scheduler is not None:  # only then: every other export stays as it was
        document["scheduler"] = run.plan.scheduler
    return document
