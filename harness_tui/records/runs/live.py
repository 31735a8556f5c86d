"""A live run as front ends use it: orchestrator, driver, recording in the store, summary and
export in one place. The CLI's ``run`` and ``resume`` and the workbench are thin callers of
:class:`LiveRun`; none of them knows SQL or reads a run's state."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ...engine.attempt import Executor
from ...engine.canonical import loads
from ...engine.driver import Driver, Stop
from ...engine.events import FAILURE_STATUSES, PENDING, RunStatus, Status
from ...engine.orchestrator import Run, TaskOrchestrator
from ...engine.recorded_calls import CallSession
from ...engine.resume import ResumeError
from ...engine.spec import DEFAULT_ISOLATION as IN_PROCESS
from ...executors.process import PROCESS, ProcessExecutor
from ...executors.threads import ThreadExecutor
from ...workflow.loader import Workflow
from ..errors import StoreError
from ..export import RunRecord
from ..export.overrides import Override
from ..store import RunStore
from .fork import Fork, ForkClock
from .settings import DEFAULT_SETTINGS, RunSettings

__all__ = ["LiveRun", "RunSummary", "executor_for"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a person wants to know when a run ends.

    Attributes:
        workflow: the workflow's name.
        status: the run status (``succeeded``, ``failed``, ``cancelled``, ``running``...).
        counts: tasks per final status (``pending`` for tasks without one), in status order.
        failures: ``(task, error)`` for every task that finally failed, in plan order.
        outputs: the outputs of the leaf tasks (those nothing depends on), in plan order.
        digest: the run digest.
    """

    workflow: str
    status: str
    counts: dict[str, int]
    failures: list[tuple[str, dict[str, str]]]
    outputs: dict[str, Any]
    digest: str

    @property
    def succeeded(self) -> bool:
        return self.status == RunStatus.SUCCEEDED


def _asks_for_process(workflow: Workflow) -> bool:
    return any(
        getattr(node.fn, "isolation", None) == PROCESS for node in workflow.graph.nodes.values()
    )


def _isolating(executor: Executor | None, isolation: str | None) -> Executor:
    """``executor`` wrapped so that isolated tasks (or all, for ``process``) run in a child;
    as it is when its attempts run no code here (a replay, a cluster)."""
    inner = executor if executor is not None else ThreadExecutor()
    if not inner.isolatable:
        return inner
    return ProcessExecutor(inner, everything=isolation == PROCESS)


def executor_for(workflow: Workflow, settings: RunSettings) -> Executor | None:
    """Where a run of ``workflow`` with ``settings`` runs its attempts: the settings'
    executor, wrapped so that the tasks asking for ``isolation: process`` (or all, for
    ``process``) run in a child."""
    executor, isolation = settings.executor, settings.isolation
    if (_asks_for_process(workflow) and isolation != IN_PROCESS) or isolation == PROCESS:
        executor = _isolating(executor, isolation)
    return executor


class LiveRun:
    """One run of a workflow being executed, optionally recorded in a run store.

    Recording starts with the first drive (a workbench that opens a file and never steps
    leaves nothing in the store). A store that fails while recording does not stop the run:
    :attr:`problem` says what went wrong and recording stops.

    Args:
        workflow: the workflow the run executes.
        run: the run (fresh, resumed or replayed).
        store: where to record it, or None.
        run_id: the run's id in the store when it is already recorded (a resume).
    """

    def __init__(
        self,
        workflow: Workflow,
        run: Run,
        *,
        store: RunStore | None = None,
        run_id: str | None = None,
    ) -> None:
        self.workflow = workflow
        self.run = run
        self.store = store
        self.run_id = run_id
        self.problem: str | None = None
        self.forked_from: tuple[str, str] | None = None  # (run digest, task) of a re-run
        self.overrides: tuple[Override, ...] = ()  # a what-if re-run's changes
        self.driver = Driver(run)
        self._finished_recorded = False

    @classmethod
    def start(
        cls,
        workflow: Workflow,
        payload: Any,
        settings: RunSettings = DEFAULT_SETTINGS,
        *,
        calls: CallSession | None = None,
    ) -> LiveRun:
        """A new run of ``workflow`` for ``payload`` with ``settings``, positioned before its
        first task.

        Args:
            calls: this run's session with the outside world instead of a recording one of
                ``settings`` (see docs/recording.md).
        """
        orchestrator = TaskOrchestrator(
            workflow.graph,
            executor=executor_for(workflow, settings),
            clock=settings.clock,
            on_failure=workflow.on_failure,
            workers=settings.workers,
        )
        run = orchestrator.start(payload, calls=calls or settings.new_calls())
        return cls(workflow, run, store=settings.store)

    @classmethod
    def fork(
        cls,
        fork: Fork,
        settings: RunSettings = DEFAULT_SETTINGS,
        *,
        calls: CallSession | None = None,
    ) -> LiveRun:
        """A new run re-running ``fork.task`` and its descendants with ``settings``, the other
        tasks replayed from the record (see :mod:`.fork`); its export records what it was
        forked from. ``calls`` answers (and records) the re-run tasks' requests."""
        kept = fork.executor(executor_for(fork.workflow, settings))  # the kept run nowhere
        live = cls.start(
            fork.workflow,
            fork.payload,
            replace(
                settings, executor=kept, clock=ForkClock(kept, settings.clock), isolation=IN_PROCESS
            ),
            calls=calls,
        )
        live.forked_from = fork.forked_from
        live.overrides = fork.overrides
        return live

    @classmethod
    def resume(
        cls,
        run_id: str,
        settings: RunSettings,
        *,
        force: bool = False,
        calls: CallSession | None = None,
    ) -> LiveRun:
        """A stored run of ``settings.store``, ready to go on where it stopped with
        ``settings`` (recording goes on too).

        A run whose every task was stored but whose end was not (the process died between
        its last task and recording the end) comes back finished: its end is recorded now,
        so the store shows its final status and digest instead of ``interrupted`` forever.

        Args:
            force: take the run over even when its lease still looks live.
            calls: record what the attempts still to run are answered, instead of a recording
                session of ``settings`` (the recordings of those that ran before are kept); a
                run that recorded goes on recording without either.

        Raises:
            StoreError: unknown run, still running elsewhere, or an unusable store.
            ResumeError: the stored events do not fit the stored workflow.
        """
        store = settings.store
        if store is None:
            raise ValueError("resuming a run needs the store it is in")
        executor = settings.executor
        if settings.isolation != IN_PROCESS:
            executor = _isolating(executor, settings.isolation)
        try:
            workflow, run = store.resume(
                run_id, executor=executor, clock=settings.clock, attach=False, force=force
            )
        except ResumeError as exc:
            raise ResumeError(f"run {run_id}: {exc}") from None
        calls = calls or settings.new_calls()
        if calls is not None and not run.finished:
            run.record_calls(calls)
        run.set_workers(settings.workers)
        live = cls(workflow, run, store=store, run_id=run_id)
        if run.finished:
            live._record_end()  # a failure to record it is live.problem, shown as a warning
        else:
            store.attach(run, run_id, on_error=live._lost)
        return live

    # -- recording --------------------------------------------------------------------------

    def _lost(self, error: StoreError) -> None:
        self.problem = f"the run is no longer recorded: {error}"

    def ensure_recorded(self) -> str | None:
        """Register the run in the store (once); its id, or None without a store."""
        if self.store is not None and self.run_id is None and self.problem is None:
            try:
                self.run_id = self.store.record(
                    self.run,
                    self.workflow,
                    on_error=self._lost,
                    forked_from=self.forked_from,
                    overrides=[o.to_json() for o in self.overrides],
                )
            except StoreError as exc:
                self.problem = f"runs are not recorded: {exc}"
        return self.run_id

    def _record_end(self) -> None:
        if self.store is None or self.run_id is None or self.problem is not None:
            return
        if self._finished_recorded:
            return
        self.flush()
        if self.problem is not None:  # the last tasks could not be written: the end neither
            return
        try:
            if self.run.finished:
                self.store.finish(self.run, self.run_id)
                self._finished_recorded = True
            else:
                self.store.abandon(self.run_id)
        except StoreError as exc:
            self.problem = f"cannot record the run's end: {exc}"

    # -- driving ----------------------------------------------------------------------------

    def drive(self, *, single: bool = False) -> Stop:
        """One step (``single``) or continue; the end of the run is recorded when reached."""
        self.ensure_recorded()
        stop = self.driver.step() if single else self.driver.continue_()
        if self.run.finished:
            self._record_end()
        else:
            self.flush()  # a pause: what ran so far is in the store
        return stop

    def flush(self, *, if_idle: bool = False) -> None:
        """Write the tasks the store has pending (group commit) now. ``if_idle``: only when
        no write is under way (from a signal handler about to leave at once)."""
        if self.store is None or self.run_id is None or self.problem is not None:
            return
        if if_idle:
            self.store.flush_if_idle()
            return
        try:
            self.store.flush(self.run_id)
        except StoreError as exc:
            self.problem = f"the run is no longer recorded: {exc}"

    def interrupt(self) -> None:
        """Ctrl+C, called from the main thread's SIGINT handler: stop the run as the user's
        stop does (cleanups still run; a second Ctrl+C cancels them too). An attempt running
        on this very thread is interrupted by the ``KeyboardInterrupt`` this raises, which its
        executor records as ``cancelled``."""
        self.driver.cancel()
        self.run.interrupt()

    def abandon(self) -> None:
        """Leave an unfinished run behind: the store marks it ``abandoned`` (resumable)."""
        if not self.run.finished:
            self.run.close()
            self._record_end()

    def record_stray_output(self) -> None:
        """Record the run's unattributed log again: threads its tasks started may have
        written after its end (or its abandonment) was recorded."""
        if self.store is None or self.run_id is None or self.problem is not None:
            return
        try:
            self.store.finish(self.run, self.run_id)
        except StoreError as exc:
            self.problem = f"cannot record the run's unattributed log: {exc}"

    # -- results ----------------------------------------------------------------------------

    def summary(self) -> RunSummary:
        """Final statuses, final failures, the leaf outputs and the run digest."""
        run, graph = self.run, self.workflow.graph
        counts = Counter(str(run.task_status(name) or PENDING) for name in run.plan.names)
        order = [*map(str, Status), PENDING]
        failures = [
            (event.task, dict(event.error))
            for event in run.final_events()
            if event.status in FAILURE_STATUSES and event.error
        ]
        texts = {name: run.output_text(name) for name in run.plan.names}
        outputs = {
            name: loads(text)
            for name, text in texts.items()
            if text is not None and not graph.dependents(name)
        }
        return RunSummary(
            workflow=self.workflow.name,
            status=run.status.value,
            counts={status: counts[status] for status in order if counts[status]},
            failures=failures,
            outputs=outputs,
            digest=run.digest,
        )

    def export(self, redact: Iterable[str] = ()) -> RunRecord:
        """The run as an export (finished or not)."""
        return RunRecord.from_run(
            self.run,
            self.workflow,
            run_id=self.run_id,
            redact=redact,
            forked_from=self.forked_from,
            overrides=self.overrides,
        )
