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

An attempt runs in its worker's own thread (no hand-off to a helper thread per attempt: that
doubled the cost of a trivial task). A stop cannot interrupt it there, so a job the run waits
for whose cancelled attempt has not returned after :data:`GRACE` seconds is *taken over*: the
run records the attempt ``cancelled`` for it, as a detached attempt is recorded, and the worker
thread is written off (it ends when the call returns; its result and events are discarded)
while a fresh thread takes its place.

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
from .step import STOPPED, StepRunner

__all__ = ["GRACE", "ParallelPool", "default_buffer"]

GRACE = 0.2
"""Seconds a stopped attempt may take to return on its own before the run takes its job over."""


def default_buffer(workers: int) -> int:
    """How many completed jobs may wait to retire before dispatch waits."""
    return max(64, 8 * workers)


class _Job:
    """One task run ahead of its retirement: its events and output, kept aside."""

    __slots__ = (
        "cancelled", "commit", "context", "done", "error", "events", "final", "input_digest",
        "output", "started", "step", "taken", "thread",
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
        self.taken = False  # taken over: its worker's further events are refused
        self.thread: threading.Thread | None = None  # the worker thread running it

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


class _TakenOver(BaseException):
    """Unwinds a worker whose job the run took over (its attempt returned after a stop)."""


class _JobContext(RunContext):
    """The run's context as one job sees it: reads go to the outcomes of the tasks before it,
    writes stay in the job (refused once the run took the job over)."""

    __slots__ = ("job", "lock")

    def __init__(
        self,
        base: RunContext,
        job: _Job,
        worker: int,
        outcomes: _JobOutcomes,
        lock: threading.Lock,
    ) -> None:
        for name in RunContext.__slots__:
            setattr(self, name, getattr(base, name))
        self.job = job
        self.lock = lock
        self.outcomes = outcomes
        self.cancelled = job.cancelled
        self.worker = worker
        self.attempt = None
        self.detach = False  # in the worker's thread: a stop takes the job over instead

    def record(self, event: TraceEvent) -> None:
        """Keep the event in the job (numbered again, and heard, when the job retires)."""
        job = self.job
        with self.lock:
            if job.taken:
                raise _TakenOver
            job.events.append(event)

    def commit(self, task: str, text: str, digest: str) -> None:
        job = self.job
        with self.lock:
            if job.taken:
                raise _TakenOver
            job.commit = (len(job.events), text, digest)


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
        thread = threading.current_thread()
        job = self._queue.get()
        while job is not None:
            final, error = self._run(job, worker, thread)
            with self._lock:
                if job.taken:  # this thread was written off, another took its place
                    return
                job.final, job.error = final, error
                self._complete(job)
                taken = self._take()
            if taken:  # this worker goes on with the first, idle ones take the rest
                job = taken[0]
                self._hand_out(taken[1:])
            else:
                job = self._queue.get()

    def _run(
        self, job: _Job, worker: int, thread: threading.Thread
    ) -> tuple[Status, BaseException | None]:
        if job.cancelled.is_set():  # dropped before it began
            return Status.CANCELLED, None
        job.started = True
        job.thread = thread
        context = job.context = _JobContext(self._context, job, worker, self._outcomes, self._lock)
        try:
            return StepRunner(context).execute(job.step), None
        except _TakenOver:
            return Status.CANCELLED, None
        except BaseException as exc:  # re-raised in the run's thread at retire
            return Status.CANCELLED, exc
        finally:
            job.context = None

    def _complete(self, job: _Job) -> None:
        """The job is done: its worker is free and its dependents may start (under the lock)."""
        job.settle()
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
                if job is None or not job.cancelled.is_set():
                    self._changed.wait()
                elif not self._changed.wait(GRACE):  # stopped: a hung attempt is left behind
                    self._take_over(job)
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

    def _take_over(self, job: _Job) -> None:
        """Record the job's attempt in flight ``cancelled``, as a detached attempt a stop left
        behind is recorded, and write its worker thread off (under the lock)."""
        context = job.context
        attempt = None if context is None else context.attempt
        if context is None or attempt is None or job.done:
            return  # between attempts, or ending: it comes back by itself
        opened = job.events[-1] if job.events else None
        started = (
            opened.started_at
            if opened is not None
            and opened.status is Status.RUNNING
            and opened.attempt == attempt.number
            else None  # a fallback has no running event: it starts now, as far as we know
        )
        job.events.append(
            context.new_event(len(job.events), job.step, Status.CANCELLED, attempt.number,
                              started, dict(STOPPED), None, None, None)
        )  # fmt: skip
        job.final = Status.CANCELLED
        self._write_off(job)
        job.settle()
        job.done = True
        self._changed.notify_all()

    def _write_off(self, job: _Job) -> None:
        """The job's worker thread is lost to it: its slot is free and a new thread may take
        its place (under the lock)."""
        job.taken = True
        self._running -= 1
        if job.thread in self._threads:
            self._threads.remove(job.thread)

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
            kept = Trigger.ALL_DONE if keep_cleanups else None
            jobs = [job for job in self._jobs.values() if nodes[job.step.task].trigger is not kept]
            for job in jobs:  # before the run hears of it: it may take over what it waits for
                job.cancelled.set()
            self._changed.notify_all()
        for job in jobs:
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
                if job.started and not job.done and not job.taken:
                    self._write_off(job)  # nothing waits for it: its slot is free at once
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
