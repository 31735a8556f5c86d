"""Parallel execution that keeps the serial trace: out-of-order dispatch, in-order retire
(docs/parallel.md).

A task is *dispatched* to a worker thread once every dependency has retired and a worker is
free, lowest plan index first, never at or past a held plan index (a breakpoint). It runs
with a :class:`_JobContext`: the run's context, except that its events and its output are
kept aside instead of entering the trace. The run *retires* tasks in plan order: it waits for
the next task's job and appends what the job kept, numbered then. Everything a task can see is
final before it starts (its dependencies retired), so its events are the serial run's, and
so are the trace, the results and every digest, whatever the timing.
"""

from __future__ import annotations

import heapq
import queue
import threading
from collections.abc import Callable, Collection

from .capture import restore_process_globals
from .context import RunContext
from .events import Status, TraceEvent
from .graph import Trigger
from .scheduler import PlanStep
from .step import StepRunner

__all__ = ["ParallelPool"]


class _Job:
    """One task run ahead of its retirement: its events and output, kept aside."""

    __slots__ = ("cancelled", "commit", "context", "done", "error", "events", "final", "step")

    def __init__(self, step: PlanStep) -> None:
        self.step = step
        self.events: list[TraceEvent] = []
        self.commit: tuple[int, str, str] | None = None  # (event index, text, digest)
        self.cancelled = threading.Event()
        self.done = threading.Event()
        self.context: RunContext | None = None  # while it runs: its attempt in flight
        self.final = Status.CANCELLED
        self.error: BaseException | None = None


class _JobContext(RunContext):
    """The run's context as one job sees it: reads go to the run's state (only retired
    tasks are read: the job's dependencies), writes stay in the job."""

    __slots__ = ("job",)

    def __init__(self, base: RunContext, job: _Job, worker: int) -> None:
        for name in RunContext.__slots__:
            setattr(self, name, getattr(base, name))
        self.job = job
        self.cancelled = job.cancelled
        self.worker = worker
        self.attempt = None
        self.detach = True  # a stop or an abandon must reach an attempt without a timeout

    def record(self, event: TraceEvent) -> None:
        """Keep the event in the job (numbered again, and heard, when the job retires)."""
        self.job.events.append(event)

    def commit(self, task: str, text: str, digest: str) -> None:
        self.job.commit = (len(self.job.events), text, digest)


class ParallelPool:
    """Up to ``workers`` tasks of one run in flight; the run retires them in plan order.

    Args:
        context: the run's context.
        steps: the plan's steps.
        retired: how many steps have retired already (a resumed run).
        workers: threads (daemons: a hung task never holds the process open); they share
            the run's executor.
    """

    def __init__(
        self,
        context: RunContext,
        steps: tuple[PlanStep, ...],
        retired: int,
        workers: int,
    ) -> None:
        self._context = context
        self._steps = steps
        self.workers = workers
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._jobs: dict[int, _Job] = {}
        self._hold: int | None = None
        self._frozen = False  # stopped: nothing more starts (cleanups are started by retire)
        self._retired = retired
        self._index = {step.task: step.index for step in steps}
        graph = context.graph
        # Each later task's dependencies not yet retired; the ready ones in a heap by index.
        self._waiting = [0] * len(steps)
        self._ready: list[int] = []
        for step in steps[retired:]:
            pending = sum(1 for d in graph.nodes[step.task].depends_on
                          if self._index[d] >= retired)  # fmt: skip
            self._waiting[step.index] = pending
            if not pending:
                self._ready.append(step.index)
        heapq.heapify(self._ready)

    # -- dispatch ---------------------------------------------------------------------------

    def hold(self, breakpoints: Collection[str]) -> None:
        """Dispatch nothing at or past the first breakpoint after the next task to retire."""
        later = [self._index[t] for t in breakpoints if self._index.get(t, -1) > self._retired]
        self._hold = min(later) if later else None

    def dispatch(self) -> None:
        """Start the lowest-index ready tasks while workers are free (nothing at or past
        the hold)."""
        if self._frozen:
            return
        ready, hold = self._ready, self._hold
        while ready and len(self._jobs) < self.workers and (hold is None or ready[0] < hold):
            self._start(heapq.heappop(ready))

    def _start(self, index: int) -> None:
        job = self._jobs[index] = _Job(self._steps[index])
        if len(self._threads) < min(self.workers, len(self._jobs)):
            number = len(self._threads) + 1
            restore_process_globals()  # a task running beside may have dropped the thread hook
            thread = threading.Thread(
                target=self._work, args=(number,), name=f"harness-worker-{number}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        self._queue.put(job)

    def _work(self, worker: int) -> None:
        while (job := self._queue.get()) is not None:
            if job.cancelled.is_set():  # abandoned before it started
                job.done.set()
                continue
            try:
                context = job.context = _JobContext(self._context, job, worker)
                job.final = StepRunner(context).execute(job.step)
            except BaseException as exc:  # re-raised in the run's thread at retire
                job.error = exc
            finally:
                job.context = None
                job.done.set()

    # -- retire -----------------------------------------------------------------------------

    def retire(self, step: PlanStep) -> Status:
        """Wait for ``step``'s job (starting it if needed), record its events in the trace,
        and start what its retirement made ready."""
        index = step.index
        if index not in self._jobs:
            if index in self._ready:
                self._ready.remove(index)
                heapq.heapify(self._ready)
            self._start(index)
        self.dispatch()
        job = self._jobs[index]
        job.done.wait()  # still in _jobs meanwhile: a stop reaches the very job waited for
        self._jobs.pop(index, None)
        if job.error is not None:
            raise job.error
        self._record(job)
        self._retired = index + 1
        graph, waiting = self._context.graph, self._waiting
        for dependent in graph.dependents(step.task):
            later = self._index[dependent]
            waiting[later] -= 1
            if not waiting[later] and later >= self._retired:
                heapq.heappush(self._ready, later)
        self.dispatch()
        return job.final

    def _record(self, job: _Job) -> None:
        context = self._context
        state = context.state
        for position, event in enumerate(job.events):
            if job.commit is not None and job.commit[0] == position:
                state.commit(event.task, len(state.events), job.commit[1], job.commit[2])
            context.record(event._replace(seq=len(state.events)))

    def in_flight(self) -> list[str]:
        """Tasks with an attempt under way ahead of their retirement (any thread: a glance,
        for a live view; their events enter the trace when they retire)."""
        return [job.step.task for job in list(self._jobs.values())
                if job.events and not job.done.is_set()]  # fmt: skip

    def running(self, step: PlanStep) -> bool:
        """Whether ``step`` has a job (in flight or done, not yet retired)."""
        return step.index in self._jobs

    # -- stop -------------------------------------------------------------------------------

    def cancel(self, keep_cleanups: bool) -> None:
        """Cancel the attempts in flight (``all_done`` cleanups go on when ``keep_cleanups``)."""
        nodes = self._context.graph.nodes
        for job in list(self._jobs.values()):
            if not (keep_cleanups and nodes[job.step.task].trigger is Trigger.ALL_DONE):
                _cancel(job)

    def abandon(self, keep: Callable[[PlanStep], bool]) -> None:
        """Drop every job that ``keep`` refuses: it is cancelled, and what it did never
        enters the trace (the run records those tasks as a serial run would). Nothing more
        is dispatched."""
        for index in [i for i, job in self._jobs.items() if not keep(job.step)]:
            _cancel(self._jobs.pop(index))
        self._ready.clear()
        self._frozen = True

    def close(self) -> None:
        """Stop the threads (a job still running is abandoned, not waited for)."""
        self.abandon(lambda step: False)
        for _ in self._threads:
            self._queue.put(None)
        self._threads.clear()


def _cancel(job: _Job) -> None:
    job.cancelled.set()
    context = job.context
    attempt = None if context is None else context.attempt
    if context is not None and attempt is not None:
        attempt.cancel()
        context.executor.cancel(attempt)
