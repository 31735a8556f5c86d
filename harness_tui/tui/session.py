"""What the workbench has open: a workflow (live) or a run export (replay), its current run,
breakpoints, and the time cursor the screen shows it at.

No Textual here. This is the document and the view over it: the inspector, the header and the
tables read it. What moves a run (intents, the drive, hold, pause, stop) is the
:class:`~harness_tui.tui.controller.RunController`'s; it replaces the run through
:meth:`Session.restart`, :meth:`Session.rerun_from` and :meth:`Session.set_payload`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import InitVar, dataclass, replace
from pathlib import Path
from typing import Any

from ..engine.canonical import check_json, digest
from ..engine.errors import HarnessError
from ..engine.events import FAILURE_STATUSES, Status, TraceEvent, ends_task
from ..engine.exchanges import Exchange
from ..engine.orchestrator import Run
from ..engine.recorded_calls import CallMode, Mismatch
from ..engine.state import Snapshot
from ..executors.threads import ThreadExecutor
from ..files import FileError, FileKind, file_kind
from ..layout import Routing, route_dag
from ..records.errors import RecordError
from ..records.export import RunRecord, export_name
from ..records.export.overrides import Override, OverrideError
from ..records.runs.fork import Fork, plan_fork
from ..records.runs.live import LiveRun
from ..records.runs.replay import replay_run
from ..records.runs.settings import DEFAULT_SETTINGS, RunSettings
from ..records.runs.whatif import edit_answers
from ..workflow.errors import WorkflowError
from ..workflow.loader import Workflow
from ..workflow.payload import Payload
from ..workflow.python_source import is_python_ref
from ..workflow.sources import load_any
from .call_modes import answering_session
from .retry_state import RetryWait, retry_wait

__all__ = ["OpenError", "Session", "open_session"]


class OpenError(HarnessError):
    """A file could not be opened; ``lines`` say why (``file:line:col: message`` each)."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        super().__init__("\n".join(lines))


class StopsAt(Collection[str]):
    """The breakpoints a drive stops before: the user's, less the tasks the run replays (a
    what-if fork's kept tasks run no code: there is nothing to stop before). A view, so that
    a breakpoint toggled during a drive counts at once."""

    def __init__(self, breakpoints: set[str], kept: frozenset[str]) -> None:
        self.breakpoints = breakpoints
        self.kept = kept

    def __contains__(self, task: object) -> bool:
        return task in self.breakpoints and task not in self.kept

    def __iter__(self) -> Iterator[str]:
        return iter([task for task in list(self.breakpoints) if task not in self.kept])

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass
class Session:
    """One open workflow (live) or run export (replay) and its current run."""

    workflow: Workflow
    payload: Any
    record: RunRecord | None = None
    settings: RunSettings = DEFAULT_SETTINGS  # how its live runs run and are recorded
    source_path: str = ""
    resumed: InitVar[LiveRun | None] = None  # a stored run taken back, instead of a new run

    def __post_init__(self, resumed: LiveRun | None) -> None:
        self.breakpoints: set[str] = set()
        self.kept: frozenset[str] = frozenset()  # a fork's tasks replayed from its record
        self._break_on_failure = False
        self.view_seq: int | None = None  # None: the live end of the trace
        self.delivered = 0  # events the UI has been told about
        self._in_flight: frozenset[str] = frozenset()
        self.answering: CallMode | None = None  # a re-run answered from a recording: how
        self.live = self._new_live() if resumed is None else resumed
        if resumed is not None:  # what it did before is shown, as a replay's trace is
            self.delivered = len(resumed.run.events)
        self._routing: Routing | None = None
        self.code_folder: Path | None = None  # where a re-run found the task code
        self.compared_with: RunRecord | None = None  # the run a what-if fork is compared with

    # -- identity ---------------------------------------------------------------------------

    @property
    def replay(self) -> bool:
        return self.record is not None

    @property
    def recording(self) -> bool:
        """Whether live runs record what HTTP services and ``io.call`` answer them."""
        return self.record is None and self.settings.recording is not None

    @property
    def payload_digest(self) -> str:
        return digest(self.payload)

    @property
    def graph_links(self) -> tuple[dict[str, tuple[str, ...]], dict[str, list[str]]]:
        graph = self.workflow.graph
        depends = {name: node.depends_on for name, node in graph.nodes.items()}
        dependents = {name: list(graph.dependents(name)) for name in graph.nodes}
        return depends, dependents

    @property
    def routing(self) -> Routing:
        """The DAG's layers, order and lanes, computed once per plan (the view places them)."""
        if self._routing is None:
            plan = self.run.plan
            depends, _ = self.graph_links
            self._routing = route_dag(
                plan.names, dict(zip(plan.names, plan.levels, strict=True)), depends
            )
        return self._routing

    # -- runs -------------------------------------------------------------------------------

    @property
    def break_on_failure(self) -> bool:
        """Hold (or stop) at failed attempts; takes effect at once, even mid-drive."""
        return self._break_on_failure

    @break_on_failure.setter
    def break_on_failure(self, on: bool) -> None:
        self._break_on_failure = on
        self.live.driver.break_on_failure = on

    @property
    def run(self) -> Run:
        """The current run."""
        return self.live.run

    @property
    def run_id(self) -> str | None:
        """The current run's id in the store, once it is recorded."""
        return self.live.run_id

    @property
    def store_problem(self) -> str | None:
        """Why runs are not (or no longer) recorded, if they are not."""
        return self.live.problem

    def _new_live(self) -> LiveRun:
        self.answering = None  # a fresh run asks the world (a re-run's mode is its own)
        self.view_seq = None
        self.delivered = 0
        self._in_flight = frozenset()
        if self.record is not None:
            return LiveRun(self.record.workflow, replay_run(self.record))
        return LiveRun.start(self.workflow, self.payload, self._live_settings())

    def _live_settings(self) -> RunSettings:
        """The settings of a new live run: the executor given (a Dask cluster), else threads
        of this process, every attempt in one so that a stop can leave it behind."""
        executor = self.settings.executor or ThreadExecutor(isolate=True)
        return replace(self.settings, executor=executor)

    def _replace_run(self) -> None:
        """Leave the current run behind (the store marks it abandoned) and start afresh."""
        self.live.abandon()
        self.compared_with = None
        self.kept = frozenset()
        self.live = self._new_live()
        self.live.driver.break_on_failure = self._break_on_failure

    def running_attempt(self) -> TraceEvent | None:
        """The attempt executing now (its ``running`` event), if any and shown live."""
        if self.view_seq is not None or not self.delivered:
            return None
        last = self.run.events[self.delivered - 1]
        return last if last.status is Status.RUNNING else None

    def waiting_to_retry(self) -> str | None:
        """The task waiting for its next attempt at the live end, if any."""
        if self.view_seq is not None or not self.delivered:
            return None
        task = self.run.events[self.delivered - 1].task
        return task if self.retry_wait(task) is not None else None

    def retry_wait(self, task: str) -> RetryWait | None:
        """Whether ``task`` waits for its next attempt, as of the position on screen."""
        events = self.run.snapshot(self.position).task_events(task)
        return retry_wait(self.workflow.graph, events)

    def elapsed(self, event: TraceEvent) -> float:
        """Seconds since ``event`` started, on the run's clock."""
        started = event.started_at or 0.0
        return max(self.run.clock.now() - started, 0.0)

    def close(self) -> None:
        """The workbench is closing or opening something else: leave the run behind."""
        self.live.abandon()

    def restart(self) -> None:
        """A fresh run of the same plan (breakpoints are kept)."""
        self._replace_run()

    def plan_rerun(self, task: str | None, overrides: tuple[Override, ...] = ()) -> Fork:
        """What re-running the run on screen from ``task`` (and from each override's task)
        would keep and run; nothing starts.

        Raises:
            RecordError: an unknown task, or a record that cannot be re-run.
        """
        opened = self.source_path or None  # an export's code is looked for beside it
        record = self._forked_record()
        return plan_fork(record, task, None, opened, self.code_folder, overrides=overrides)

    def _forked_record(self) -> RunRecord:
        """What a re-run forks: an export opened in replay as it was recorded, whole (its
        replay may not have reached the end, or be back in time), else the run on screen. A
        redacted export cannot be forked as it is (its outputs were replaced): its replay
        is, as far as it went."""
        if self.record is not None and not self.record.redacted:
            return self.record
        return self.export_record()

    def rerun_from(
        self,
        task: str | None,
        calls: CallMode = CallMode.LIVE,
        overrides: tuple[Override, ...] = (),
    ) -> Fork:
        """Re-run the run on screen from ``task``: it and its descendants run with the
        current code, every other task keeps what this run did (see :mod:`records.runs.fork`).
        A replayed export becomes a live run here. ``calls`` says how the re-run tasks reach
        models and APIs when the run holds recordings: ``offline`` answers them from the
        recording and sends nothing (an unrecorded request fails its attempt, diverged),
        ``fill`` sends only what it lacks, ``live`` (or no recording) sends everything, as
        this workbench's live runs do (docs/recording.md). With ``overrides`` (a what-if
        re-run, :mod:`records.export.overrides`) their tasks are starts too, and the run on
        screen is kept in :attr:`compared_with`, to compare the fork with once it ends.

        Raises:
            RecordError: ``task`` is unknown, or the record cannot be re-run.
        """
        fork = self.plan_rerun(task, overrides)
        redacted = (self.record or fork.record).redacted
        recording = self.settings.recording
        answering = answering_session(calls, self.recordings(), redacted, recording)
        answers = [o for o in fork.overrides if o.kind == "answer"]
        if answers:  # an edited answer is one the recording gives: it needs offline or fill
            if answering is None:
                raise OverrideError(
                    f"{answers[0].task}: an edited answer comes from the recording: re-run "
                    "offline or fill"
                )
            edit_answers(answering.recording, answers)
        self.compared_with = fork.record if overrides else None
        self.code_folder = fork.code_folder or self.code_folder
        self.answering = None if answering is None else calls
        self.live.abandon()
        self.record = None
        self.view_seq, self.delivered = None, 0
        self._in_flight = frozenset()
        self.live = LiveRun.fork(fork, self._live_settings(), calls=answering)
        self.kept = fork.kept
        self.live.run.set_workers(self.settings.workers)
        self.live.driver.break_on_failure = self._break_on_failure
        return fork

    # -- recorded calls ---------------------------------------------------------------------

    def recordings(self) -> dict[tuple[str, int], list[Exchange]]:
        """What the outside world answered each attempt of the run on screen (an export's
        recordings in replay: a damaged one counts as none, :meth:`recordings_problem` says
        why)."""
        if self.record is None:
            return self.run.recordings()
        return {} if self.recordings_problem() else self.record.recordings

    def recordings_problem(self) -> str | None:
        """Why the export's recorded calls cannot be read, if they cannot (read when first
        asked: opening an export never parses them)."""
        if self.record is None:
            return None
        try:
            _ = self.record.recordings  # parsed (and kept) on first use
        except RecordError as exc:
            return str(exc)
        return None

    def exchanges(self, task: str, attempt: int) -> tuple[Exchange, ...]:
        """What one attempt of ``task`` was answered, in sequence order."""
        if self.record is None:
            return self.run.exchanges(task, attempt)
        return tuple(self.recordings().get((task, attempt), ()))

    def mismatch(self, task: str, attempt: int) -> Mismatch | None:
        """The request of a diverged attempt and the nearest recorded one (live runs only:
        an export keeps the divergence's line, in the attempt's error)."""
        return None if self.record is not None else self.run.call_mismatch(task, attempt)

    def attempt_shown(self, task: str) -> int:
        """The latest attempt of ``task`` as of the trace position on screen (0: none yet)."""
        events = self.run.snapshot(self.position).task_events(task)
        return max((event.attempt for event in events), default=0)

    def set_payload(self, payload: Any) -> None:
        """Replan for a new payload and start over."""
        check_json(payload, "payload")
        self.payload = payload
        self._routing = None
        self._replace_run()

    @property
    def stops_at(self) -> StopsAt:
        """The breakpoints a drive of the run on screen stops before (see :class:`StopsAt`)."""
        return StopsAt(self.breakpoints, self.kept)

    def toggle_breakpoint(self, task: str) -> bool:
        """Add or remove a breakpoint; True if it is now set."""
        if task in self.breakpoints:
            self.breakpoints.discard(task)
            return False
        self.breakpoints.add(task)
        return True

    # -- time travel ------------------------------------------------------------------------

    @property
    def position(self) -> int:
        """The trace position on screen (-1 before the first event)."""
        return self.delivered - 1 if self.view_seq is None else self.view_seq

    def snapshot(self) -> Snapshot:
        return self.run.snapshot(self.position)

    def status(self, task: str) -> Status | None:
        """A task's status as of the trace position on screen; at the live end, a task that
        runs ahead of its turn (workers) is ``running`` before its events enter the trace."""
        status = self.run.snapshot(self.position).status(task)
        if status is None and self.view_seq is None and task in self.in_flight:
            return Status.RUNNING
        return status

    @property
    def in_flight(self) -> frozenset[str]:
        """Tasks running ahead of their turn to retire (a parallel run), as last looked at
        by :meth:`look_in_flight`."""
        return self._in_flight

    def look_in_flight(self) -> frozenset[str]:
        """Look again which tasks run ahead (any thread); the tasks whose look changed."""
        now = frozenset(self.run.in_flight())
        changed, self._in_flight = now ^ self._in_flight, now
        return changed

    def attempts(self, task: str) -> tuple[int, float | None]:
        """Attempts made and total duration, as of the trace position on screen."""
        attempts = 0
        duration: float | None = None
        position = self.position
        events = self.run.snapshot(position).task_events(task)
        for event in events:
            attempts = max(attempts, event.attempt)
            if event.attempt and event.duration is not None and event.status is not Status.RUNNING:
                duration = (duration or 0.0) + event.duration
        running = self.running_attempt()
        if running is not None and events and events[-1] is running:
            duration = (duration or 0.0) + self.elapsed(running)  # ticking while it runs
        return attempts, duration

    def progress(self) -> tuple[int, int]:
        """Tasks with a final status as of the position on screen, and the plan's size."""
        events = self.run.events
        position = self.position
        graph = self.workflow.graph
        if self.view_seq is None and position == len(events) - 1:
            # The cursor counts a task from its dispatch; one still mid-way is not done.
            midway = bool(events) and not ends_task(graph, events[-1])
            return self.run.cursor - midway, len(self.run.plan)
        done = sum(1 for event in events[: position + 1] if ends_task(graph, event))
        return done, len(self.run.plan)

    def go_to(self, position: int) -> bool:
        """Show the state as of trace position ``position`` (-1: before the first event;
        clamped); at the last delivered event the view follows the run again. False if the
        view did not move."""
        last = self.delivered - 1
        position = max(-1, min(position, last))
        target = None if position >= last else position
        if target == self.view_seq:
            return False
        self.view_seq = target
        return True

    def go_back(self) -> bool:
        """One event back in time; False at the start."""
        return self.position >= 0 and self.go_to(self.position - 1)

    def go_forward(self) -> bool:
        """One event forward; at the live end the view follows the run again."""
        return self.view_seq is not None and self.go_to(self.position + 1)

    def go_by_task(self, back: bool) -> bool:
        """To the end of the previous task (or of the next one): its final event."""
        graph = self.workflow.graph
        return self._go_to_first(back, lambda event: ends_task(graph, event))

    def go_to_failure(self, back: bool) -> bool:
        """To the previous (or next) failed attempt: failed, timed out, or a final failure."""
        return self._go_to_first(back, lambda event: event.status in FAILURE_STATUSES)

    def _go_to_first(self, back: bool, wanted: Callable[[TraceEvent], bool]) -> bool:
        """To the nearest delivered event before (``back``) or after the position that is
        ``wanted``; False if there is none."""
        events, here = self.run.events, self.position
        span = range(here - 1, -1, -1) if back else range(here + 1, self.delivered)
        for seq in span:
            if wanted(events[seq]):
                return self.go_to(seq)
        return False

    def go_live(self) -> None:
        self.view_seq = None

    def deliver(self, recorded: int) -> set[str]:
        """Count the trace's first ``recorded`` events as shown (never more than the run
        holds: an update from a run left behind cannot overrun a fresh one); the tasks of
        the events newly shown."""
        events = self.run.events
        total = min(recorded, len(events))
        if total <= self.delivered:
            return set()
        tasks = {events[i].task for i in range(self.delivered, total)}
        self.delivered = total
        return tasks

    # -- export -----------------------------------------------------------------------------

    def export_record(self) -> RunRecord:
        if self.record is not None:
            return RunRecord.from_run(self.run, self.workflow, run_id=self.record.run_id)
        return self.live.export()

    def default_export_name(self) -> str:
        return export_name(self.workflow.name, self.run.digest)


def open_session(
    path: str, payload: Payload | None = None, settings: RunSettings = DEFAULT_SETTINGS
) -> Session:
    """Open a workflow file (with ``payload``, or its own) or a run export; its live runs
    run with ``settings``.

    Raises:
        OpenError: with the lines to show (never a traceback).
    """
    file = Path(path)
    kind = FileKind.WORKFLOW  # file.py:factory imports the user's module, by design (I6)
    if not is_python_ref(path):
        try:
            kind = file_kind(file)
        except FileError as exc:  # a pipe, a device, a folder: refused before reading
            raise OpenError(path, [str(exc)]) from None
    if kind is FileKind.EXPORT:
        try:
            record = RunRecord.read(file)
        except RecordError as exc:
            raise OpenError(path, [str(exc)]) from None
        try:
            return Session(
                record.workflow, record.payload, record=record, settings=settings, source_path=path
            )
        except RecordError as exc:
            raise OpenError(path, [str(exc)]) from None
    try:
        workflow = load_any(path)
    except WorkflowError as exc:
        raise OpenError(path, [str(p) for p in exc.problems]) from None
    value = workflow.payload if payload is None else payload.value
    return Session(workflow, value, settings=settings, source_path=path)
