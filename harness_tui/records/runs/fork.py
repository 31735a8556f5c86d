"""Re-running a recorded run from a task (docs/reference.md, "Command line").

Every task that is neither the chosen task nor its descendant keeps what the record says it
did: its attempts are replayed from the record (events, output, log) and its code does not
run. The chosen task and its descendants, and kept tasks the record shows ``cancelled``, run
with the current code. The payload is the record's. Since kept tasks replay their recorded
events and outputs, a fork whose re-run tasks produce the outputs a fresh run would has that
fresh run's trace and digest; what it was forked from is kept beside the digests.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...engine.attempt import Attempt, Executor, Outcome
from ...engine.capture import UNATTRIBUTED
from ...engine.clock import Clock, SystemClock
from ...engine.diff import json_changes
from ...engine.events import Status, ends_task
from ...engine.exchanges import Exchange
from ...engine.graph import TaskNode
from ...engine.recorded import RecordedExecutor
from ...engine.spec import task_spec
from ...workflow.errors import WorkflowError
from ...workflow.loader import Workflow, parse_workflow
from ...workflow.python_source import load_python, python_spec
from ...workflow.refs import PYTHON_REF
from ..errors import RecordError
from ..export import RunRecord
from ..export.overrides import Override
from .whatif import OverridingExecutor, check_tasks, patch_workflow, set_outputs

__all__ = ["Fork", "ForkError", "plan_fork"]


class ForkError(RecordError):
    """A run cannot be re-run from that task (unknown task, a kept task changed...)."""


@dataclass(frozen=True, slots=True)
class Fork:
    """What a re-run from ``task`` keeps and what it runs.

    Attributes:
        workflow: the workflow the fork runs (the record's, or the one given).
        payload: the record's payload.
        task: the task the fork re-runs from.
        kept: tasks replayed from the record instead of run.
        forked_from: ``(run digest, task)`` of the record, for the new run's export.
        record: the record forked.
        code_folder: the folder the re-run tasks' code is imported from (None when they
            need none there: built-ins, or modules installed on ``sys.path``).
        overrides: the what-if changes it makes (:mod:`..export.overrides`), ``with`` ones
            with their patch: those given, each a start, after the record's that still hold.
        starts: the tasks it re-runs from (``task``, and those of the overrides given).
    """

    workflow: Workflow
    payload: Any
    task: str
    kept: frozenset[str]
    forked_from: tuple[str, str]
    record: RunRecord
    code_folder: Path | None = None
    overrides: tuple[Override, ...] = ()
    starts: frozenset[str] = frozenset()

    def executor(self, live: Executor | None = None) -> KeptExecutor:
        """An executor that replays the kept tasks' attempts (and their recorded calls),
        answers the tasks whose output is overridden, and runs the others with ``live``
        (default: in this process)."""
        logs = {k: v for k, v in self.record.logs.items() if k != UNATTRIBUTED}
        recorded = RecordedExecutor(self.record.events, self.record.outputs, logs)
        outputs = set_outputs(self.overrides)
        runs = OverridingExecutor(live or Executor(), outputs) if outputs else live or Executor()
        return KeptExecutor(recorded, runs, self.kept, self.record.recordings)


def plan_fork(
    record: RunRecord,
    task: str | None,
    workflow: Workflow | None = None,
    export_path: str | Path | None = None,
    code_folder: Path | None = None,
    overrides: tuple[Override, ...] = (),
) -> Fork:
    """Decide what a re-run of ``record`` from ``task`` (and from the task of each override)
    keeps, and where its code is.

    The task code is looked for in ``workflow``'s folder when one is given; otherwise next
    to the export (``export_path``), then in the folder the record names, if it still
    exists; modules installed on ``sys.path`` need no folder.

    Args:
        record: the run to fork (an export, or a stored run exported).
        task: the task to re-run from.
        workflow: the workflow to run instead of the record's own (the current file): any
            change to a kept task's spec or dependencies is refused.
        export_path: the export file the record was read from, if any.
        code_folder: where a previous re-run of this run found its code (looked in first).
        overrides: what-if changes (:mod:`..export.overrides`); ``task`` may then be None.

    Raises:
        ForkError: the record is redacted, ``task`` is unknown, a kept task changed, or the
            code is nowhere it was looked for (the message names each place).
        OverrideError: an override names an unknown task or parameter.
    """
    name = record.source_name
    if record.redacted:
        raise ForkError(f"{name}: a redacted export cannot be re-run (its outputs were replaced)")
    recorded = record.workflow
    if workflow is not None:
        places = [("in the folder of --workflow", _folder_of(workflow))]
        hint = "put it beside that workflow, or install it"
        target, folder = workflow, _code_folder(workflow, places, hint)
    else:
        places = _places(recorded, export_path)
        if code_folder is not None:
            places.insert(0, ("where the last re-run found it", code_folder))
        target, folder = _runnable(record, recorded, places)
    if task is not None and task not in target.graph.nodes:
        raise ForkError(f"{name}: no task {task!r} in workflow {target.name!r}")
    target, overrides, starts = _overridden(record, target, folder, task, overrides)
    first = min(starts, key=list(target.graph.nodes).index)
    rerun = set(starts).union(*(target.graph.descendants(start) for start in starts))
    final = {e.task: e.status for e in record.events if ends_task(recorded.graph, e)}
    kept = frozenset(
        t for t in target.graph.nodes
        if t not in rerun and t in final and final[t] is not Status.CANCELLED
    )  # fmt: skip
    if workflow is not None:
        _check_kept_unchanged(recorded, workflow, kept, first)
    forked_from = (record.digests["run"], first)
    return Fork(
        target, record.payload, first, kept, forked_from, record, folder, overrides,
        frozenset(starts),
    )  # fmt: skip


def _overridden(
    record: RunRecord,
    target: Workflow,
    folder: Path | None,
    task: str | None,
    overrides: tuple[Override, ...],
) -> tuple[Workflow, tuple[Override, ...], set[str]]:
    """The workflow with the parameters set, every override that applies (the record's that
    still hold, then those given) and the tasks the re-run starts from.

    Raises:
        OverrideError: an override names an unknown task or parameter.
        ForkError: nothing to re-run from.
    """
    check_tasks(overrides, target, f"workflow {target.name!r}")
    starts = {o.task for o in overrides} | ({task} if task is not None else set())
    if not starts:
        raise ForkError(f"{record.source_name}: nothing to re-run: give --from TASK or an override")
    inherited = tuple(o for o in _inherited(record.overrides, overrides, task)
                      if o.task in target.graph.nodes)  # fmt: skip
    base = folder if folder is not None else _folder_of(target)
    target, applied = patch_workflow(target, (*inherited, *overrides), base)
    return target, applied, starts


def _inherited(
    parent: tuple[Override, ...], overrides: tuple[Override, ...], task: str | None
) -> list[Override]:
    """The overrides of the record (a what-if fork re-run again) that still hold: not those
    of ``task`` (re-run with its code), nor those a new override replaces (the same one, or
    any of a task whose output is now set, or the output of a task now given another answer
    or parameter). They apply without being starts: a kept task shows them already."""
    new = {o.key for o in overrides}
    outputs = {o.task for o in overrides if o.kind == "output"}
    changed = {o.task for o in overrides if o.kind != "output"}
    return [
        o for o in parent
        if o.task != task
        and o.key not in new
        and o.task not in outputs
        and not (o.kind == "output" and o.task in changed)
    ]  # fmt: skip


_Place = tuple[str, Path | None]
"""Where code may be: ``(how the place is named, folder)``; None when there is no folder."""


def _places(recorded: Workflow, export_path: str | Path | None) -> list[_Place]:
    """Next to the export, then the folder the record names (relative to here), each once."""
    places: list[_Place] = []
    if export_path is not None:
        places.append(("next to the export", Path(export_path).resolve().parent))
    if recorded.path != "<string>":
        file = PYTHON_REF.match(recorded.path)
        path = Path(file["file"] if file else recorded.path)
        try:
            folder: Path | None = path.resolve().parent
        except (OSError, ValueError):  # a NUL in it, or a path the OS cannot resolve
            folder = None
        if places and folder == places[0][1]:
            places[0] = ("next to the export and in the recorded folder", folder)
        else:
            places.append(("in the recorded folder", folder))
    return places


def _folder_of(workflow: Workflow) -> Path | None:
    file = PYTHON_REF.match(workflow.path)
    path = file["file"] if file else workflow.path
    return None if path == "<string>" else Path(path).resolve().parent


def _modules(workflow: Workflow) -> dict[str, str]:
    """Top-level module -> the first task whose ``run:`` or ``fallback:`` imports it."""
    found: dict[str, str] = {}
    for node in workflow.graph.nodes.values():
        for ref in (node.ref, node.fallback_ref):
            if ref and not ref.startswith("builtin:") and ":" in ref:
                found.setdefault(ref.partition(":")[0].partition(".")[0], node.name)
    return found


def _has(folder: Path | None, module: str) -> bool:
    """Whether ``module`` (top level) is in ``folder``: looked up, not imported."""
    if folder is None or not folder.is_dir():
        return False
    return importlib.machinery.PathFinder.find_spec(module, [str(folder)]) is not None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


_HINT = "give --workflow FILE to name the workflow whose folder holds it"


def _code_folder(workflow: Workflow, places: list[_Place], hint: str = _HINT) -> Path | None:
    """The first place that holds every module the workflow's references name (None when
    they are all installed, or there are none).

    Raises:
        ForkError: a module is in none of the places nor installed.
    """
    modules = _modules(workflow)
    for _, folder in places:
        if modules and all(_has(folder, module) for module in modules):
            return folder
    missing = [module for module in modules if not _installed(module)]
    if not missing:
        return None
    module = missing[0]
    looked = "; ".join(
        f"{how} ({folder if folder is not None else 'no folder'}"
        f"{', missing' if folder is not None and not folder.is_dir() else ''})"
        for how, folder in places
    )
    raise ForkError(
        f"cannot find module {module!r} (task {modules[module]!r}): looked {looked}; {hint}"
    )


def _runnable(
    record: RunRecord, recorded: Workflow, places: list[_Place]
) -> tuple[Workflow, Path | None]:
    """The record's own workflow, with code to run, and the folder its code comes from: a
    workflow file's (its references import from that folder when they run), or a
    Python-defined one imported again from ``file.py:factory`` found in one of ``places``
    (its embedded spec has no code), refused when that module no longer matches the
    record."""
    if python_spec(recorded) is None:
        folder = _code_folder(recorded, places)
        if folder is None:
            return recorded, folder
        return parse_workflow(recorded.source, recorded.path, base=folder), folder
    file = PYTHON_REF.match(recorded.path)
    found = [
        folder / Path(file["file"]).name
        for _, folder in places
        if file and folder is not None and (folder / Path(file["file"]).name).is_file()
    ]
    if file is None or not found:
        looked = "; ".join(f"{how} ({folder})" for how, folder in places)
        raise ForkError(
            f"{record.source_name}: this run was defined in Python and {recorded.path} is not "
            f"found (looked {looked}); give --workflow FILE.py:factory"
        )
    try:
        current = load_python(f"{found[0]}:{file['attr']}")
    except WorkflowError as exc:
        raise ForkError(
            f"{record.source_name}: this run was defined in Python and {recorded.path} cannot "
            f"be loaded here ({exc.problems[0].message}); give --workflow FILE.py:factory"
        ) from None
    return current, found[0].parent


def _comparable(node: TaskNode) -> dict[str, Any]:
    """A task's spec as a re-run compares it: references with or without the ``python:``
    mark of an embedded spec read the same."""
    spec = task_spec(node)
    for key in ("run", "fallback", "when"):
        value = spec[key]
        if isinstance(value, str):
            spec[key] = value.removeprefix("python:")
    return spec


def _check_kept_unchanged(recorded: Workflow, current: Workflow, kept: frozenset[str],
                          task: str) -> None:  # fmt: skip
    """Refuse a kept task whose spec (or dependencies) differs from the record's."""
    for name in sorted(kept, key=list(current.graph.nodes).index):
        old = _comparable(recorded.graph.nodes[name])
        new = _comparable(current.graph.nodes[name])
        if old != new:
            change = json_changes(old, new)[0]
            where = change["path"].removeprefix("$.")
            raise ForkError(
                f"{name} would be kept from the record but its {where} changed; re-run from "
                f"{name} or an ancestor of it (not {task})"
            )


class KeptExecutor(Executor):
    """Replays kept tasks' recorded attempts; runs every other task with the live executor.

    Retry intervals of a kept task are not waited again: :class:`ForkClock` asks
    :attr:`replaying` whether the attempt just executed was a replayed one.
    """

    name = "kept"

    def __init__(
        self,
        recorded: RecordedExecutor,
        live: Executor,
        kept: frozenset[str],
        calls: Mapping[tuple[str, int], Sequence[Exchange]] | None = None,
    ) -> None:
        self.recorded = recorded
        self.live = live
        self.kept = kept
        self.calls = calls or {}
        self.replaying = False
        self.pickles = live.pickles

    def run(self, attempt: Attempt) -> Outcome:
        self.replaying = attempt.task in self.kept
        if self.replaying:
            if attempt.io is not None:  # the fork keeps what the kept attempt was answered
                for exchange in self.calls.get((attempt.task, attempt.number), ()):
                    attempt.io.keep(exchange)
            return self.recorded.run(attempt)
        return self.live.run(attempt)

    def cancel(self, attempt: Attempt) -> None:
        self.live.cancel(attempt)

    def interrupt(self) -> None:
        """Ctrl+C: as the live executor takes it (a replayed attempt runs no code to stop)."""
        self.live.interrupt()

    def start(self) -> None:
        self.live.start()

    def close(self) -> None:
        self.live.close()


class ForkClock:
    """The system clock, except that waits between a kept task's replayed attempts are
    skipped (they were waited when the record was made)."""

    def __init__(self, executor: KeptExecutor, clock: Clock | None = None) -> None:
        self.executor = executor
        self.clock = clock if clock is not None else SystemClock()

    def now(self) -> float:
        return self.clock.now()

    def wall(self) -> float:
        return self.clock.wall()

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        if not self.executor.replaying:
            self.clock.sleep(seconds, cancel)

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        return self.clock.wait(done, timeout)


def kept_summary(fork: Fork, order: Mapping[str, int]) -> str:
    """``kept 3 tasks from the record (a, b, c)`` for people."""
    names = sorted(fork.kept, key=order.__getitem__)
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return f"kept {len(names)} task{'s' * (len(names) != 1)} from the record ({shown})"
