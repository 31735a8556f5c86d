"""Parallel execution that keeps the serial trace: dispatch on completion, retire in plan order
(docs/parallel.md).

A task is *dispatched* to a worker thread once every dependency has *completed* (its final
status is known: its last attempt or its fallback is done, retired or not) and a worker is
free, lowest plan index first; never at or past a held plan index (a breakpoint, or a drive
that returned), and not while the reorder buffer of jobs completed but not yet retired is full.
A worker is free when its job completes: it then takes the next startable task itself.

A job runs with a :class:`_JobContext`: the run's context, except that its events and its
output are kept aside instead of entering the trace, and what it reads of the tasks before it
(statuses, outputs, input digests) comes from the run's state or, for a dependency completed but
not yet retired, from that dependency's job (:class:`_JobOutcomes`). Everything a task can see
is final before it starts, so its events are the serial run's.

The run *retires* tasks in plan order: it waits for the next task's job and appends what the
job kept, numbered then. So the trace, the results and every digest are the serial run's,
whatever the timing. After a stop, jobs beyond the stopping point are dropped (their events
never enter the trace) and the run records those tasks as the serial run does.
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
from .state import Commit, RunState
from .step import StepRunner

__all__ = ["ParallelPool", "default_buffer"]


def default_buffer(workers: int) -> int:
    """How many completed jobs may wait to retire before dispatch waits."""
    return max(64, 8 * workers)


class _Job:
    """One task run ahead of its retirement: its events and output, kept aside."""

    __slots__ = (
        "cancelled", "commit", "context", "done", "error", "events", "final", "input_digest",
        "output", "started", "step",
    )  # fmt: skip

    def __init__(self, step: PlanStep) -> None:
        self.step = step
        self.events: list[TraceEvent] = []
        self.commit: tuple[int, str, str] | None = None  # (event index, text, digest)
        self.cancelled = threading.Event()
        self.done = False  # completed (set under the pool's lock, after what follows is final)
        self.started = False  # False: dropped before it began, it recorded nothing
        self.context: RunContext | None = None  # while it runs: its attempt in flight
        self.final = Status.CANCELLED
        self.error: BaseException | None = None
        self.output: Commit | None = None
        self.input_digest: str | None = None

    def settle(self) -> None:
        """Keep what dependents read of this job once it completed."""
        if self.commit is not None:
            self.output = Commit(self.step.task, -1, self.commit[1], self.commit[2])
        for event in reversed(self.events):
            if event.input_digest is not None:
                self.input_digest = event.input_digest
                break


class _JobOutcomes:
    """What a job reads of the tasks before it: the run's state, and the jobs completed but not
    yet retired. A job only reads its ancestors, all completed before it started; a retiring
    job enters the state before it leaves the jobs, so a reader always finds it in one."""

    __slots__ = ("_index", "_jobs", "_state")

    def __init__(self, state: RunState, jobs: dict[int, _Job], index: dict[str, int]) -> None:
        self._state = state
        self._jobs = jobs
        self._index = index

    def _completed(self, task: str) -> _Job | None:
        index = self._index.get(task)
        job = None if index is None else self._jobs.get(index)
        return job if job is not None and job.done else None

    def status(self, task: str) -> Status | None:
        job = self._completed(task)
        return self._state.status(task) if job is None else job.final

    def output(self, task: str) -> Commit | None:
        job = self._completed(task)
        return self._state.output(task) if job is None else job.output

    def input_digest(self, task: str) -> str | None:
        job = self._completed(task)
        return self._state.input_digest(task) if job is None else job.input_digest

    def output_names(self) -> list[str]:
        # The jobs first: one that retires meanwhile is then found in both, never in neither.
        ahead = sorted(
            (job.step.index, job.step.task)
            for job in list(self._jobs.values())
            if job.done and job.output is not None
        )
        names = self._state.output_names()
        return list(dict.fromkeys([*names, *(task for _, task in ahead)]))


class _JobContext(RunContext):
    """The run's context as one job sees it: reads go to the outcomes of the tasks before it,
    writes stay in the job."""

    __slots__ = ("job",)

    def __init__(self, base: RunContext, job: _Job, worker: int, outcomes: _JobOutcomes) -> None:
        for name in RunContext.__slots__:
            setattr(self, name, getattr(base, name))
        self.job = job
        self.outcomes = outcomes
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
        buffer: completed jobs that may wait to retire (default :func:`default_buffer`).
    """

    def __init__(
        self,
        context: RunContext,
        steps: tuple[PlanStep, ...],
        retired: int,
        workers: int,
        buffer: int | None = None,
    ) -> None:
        self._context = context
        self._steps = steps
        self.workers = workers
        self._bound = default_buffer(workers) if buffer is None else buffer
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a job completed, or a stop came
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        # Everything below is guarded by the lock.
        self._jobs: dict[int, _Job] = {}  # dispatched, not retired (running or completed)
        self._running = 0  # jobs taken and not completed: the workers in use
        self._hold: int | None = None  # nothing at or past this index starts...
        self._wanted: int | None = None  # ...except the task the run waits to retire
        self._stopped = False  # nothing more starts but what the run waits for
        self._retired = retired  # the next plan index to retire
        self._index = {step.task: step.index for step in steps}
        self._outcomes = _JobOutcomes(context.state, self._jobs, self._index)
        graph = context.graph
        # Each later task's dependencies not yet completed; the startable ones in a heap.
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

    def hold(self, breakpoints: Collection[str] | None, cursor: int) -> None:
        """Start nothing at or past the first breakpoint after plan index ``cursor`` (the
        task the run is on runs even if it is one); None: start nothing new at all until
        the run asks for its next task."""
        if breakpoints is None:
            hold: int | None = 0
        else:
            index = self._index
            later = [index[t] for t in breakpoints if index.get(t, -1) > cursor]
            hold = min(later) if later else None
        with self._lock:
            self._hold = hold
            taken = self._take()
        self._hand_out(taken)

    def _take(self) -> list[_Job]:
        """Take the lowest-index startable tasks while workers are free (under the lock)."""
        ready, jobs, taken = self._ready, self._jobs, []
        while ready and self._running < self.workers:
            index = ready[0]
            if index in jobs:  # pushed again after a stop: it has a job already
                heapq.heappop(ready)
                continue
            if index != self._wanted and (
                self._stopped
                or (self._hold is not None and index >= self._hold)
                or len(jobs) - self._running >= self._bound
            ):
                break
            heapq.heappop(ready)
            job = jobs[index] = _Job(self._steps[index])
            self._running += 1
            taken.append(job)
        while len(self._threads) < self._running:
            number = len(self._threads) + 1
            restore_process_globals()  # a task running beside may have dropped the thread hook
            thread = threading.Thread(
                target=self._work, args=(number,), name=f"harness-worker-{number}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        return taken

    def _hand_out(self, jobs: list[_Job]) -> None:
        for job in jobs:
            self._queue.put(job)

    def _work(self, worker: int) -> None:
        job = self._queue.get()
        while job is not None:
            self._run(job, worker)
            with self._lock:
                self._complete(job)
                taken = self._take()
            if taken:  # this worker goes on with the first, idle ones take the rest
                job = taken[0]
                self._hand_out(taken[1:])
            else:
                job = self._queue.get()

    def _run(self, job: _Job, worker: int) -> None:
        if job.cancelled.is_set():  # dropped before it began
            return
        job.started = True
        try:
            context = job.context = _JobContext(self._context, job, worker, self._outcomes)
            job.final = StepRunner(context).execute(job.step)
        except BaseException as exc:  # re-raised in the run's thread at retire
            job.error = exc
        finally:
            job.context = None
            job.settle()

    def _complete(self, job: _Job) -> None:
        """The job is done: its worker is free and its dependents may start (under the lock)."""
        job.done = True
        self._running -= 1
        if job.started and not self._stopped:
            index, waiting, ready = self._index, self._waiting, self._ready
            for dependent in self._context.graph.dependents(job.step.task):
                later = index[dependent]
                waiting[later] -= 1
                if not waiting[later]:
                    heapq.heappush(ready, later)
        self._changed.notify_all()

    # -- retire -----------------------------------------------------------------------------

    def retire(self, step: PlanStep, start: bool = False) -> Status | None:
        """Wait for ``step``'s job (starting it if needed), record its events in the trace,
        and start what that made room for. None: the run was stopped before the job began
        (it recorded nothing); with ``start`` it begins even then (a cleanup after a stop).
        """
        index = step.index
        with self._lock:
            self._retired = self._wanted = index
            job = self._jobs.get(index)
            if job is not None and start and job.done and not job.started:
                del self._jobs[index]  # dropped by a stop before it began: it begins now
                job = None
            if job is None:
                if self._stopped and not start:
                    self._wanted = None
                    return None
                if not (self._ready and self._ready[0] == index):
                    heapq.heappush(self._ready, index)
            taken = self._take()
        self._hand_out(taken)
        with self._lock:
            while (job := self._jobs.get(index)) is None or not job.done:
                if job is None and self._stopped and not start:
                    self._wanted = None
                    return None
                self._changed.wait()
            self._wanted = None
        if job.error is not None or not job.started:
            with self._lock:
                self._jobs.pop(index, None)
            if job.error is not None:
                raise job.error
            return None
        self._record(job)
        with self._lock:
            self._jobs.pop(index, None)  # after it entered the state: see _JobOutcomes
            self._retired = index + 1
            taken = self._take()
        self._hand_out(taken)
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
                if job.events and not job.done]  # fmt: skip

    # -- stop -------------------------------------------------------------------------------

    def cancel(self, keep_cleanups: bool) -> None:
        """The user stopped the run: nothing more starts but what the run waits for, and the
        attempts in flight are cancelled (``all_done`` cleanups go on when ``keep_cleanups``).
        Any thread."""
        nodes = self._context.graph.nodes
        with self._lock:
            self._stopped = True
            jobs = list(self._jobs.values())
            self._changed.notify_all()
        for job in jobs:
            if not (keep_cleanups and nodes[job.step.task].trigger is Trigger.ALL_DONE):
                _cancel(job)

    def abandon(self, keep: Callable[[PlanStep], bool]) -> None:
        """Drop every job but those ``keep`` accepts whose dependencies all retired before the
        stop (what they saw is then what the serial run's cleanups see): each is cancelled,
        and what it did never enters the trace (the run records those tasks as a serial run
        would). Nothing more starts but what the run waits for."""
        nodes, index = self._context.graph.nodes, self._index
        with self._lock:
            self._stopped = True
            self._ready.clear()
            retired = self._retired
            dropped = [
                self._jobs.pop(i)
                for i, job in list(self._jobs.items())
                if not keep(job.step)
                or any(index[d] >= retired for d in nodes[job.step.task].depends_on)
            ]
        for job in dropped:
            _cancel(job)

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
