"""Taking one plan step to its final status: trigger rule, condition, attempts with retries at
a fixed interval, timeouts, the fallback, and committing the output."""

from __future__ import annotations

import hashlib
import json

from .attempt import CANCELLED, ERROR, OK, TIMEOUT, Attempt, Executor, Outcome
from .canonical import CanonicalError, check_json, digest_text, loads
from .capture import LogBuffer, attempt_began, attempt_ended, restore_process_globals
from .context import RunContext
from .events import OUTPUT_STATUSES, Status
from .graph import TaskNode, Trigger
from .inputs import ResultsView, TaskInputs
from .recorded_calls import AttemptIO
from .scheduler import PlanStep

__all__ = ["STOPPED", "StepRunner"]

STOPPED = {"type": "Cancelled", "message": "stopped by the user"}
"""The error of an attempt a stop cancelled (a copy goes into each event)."""

_new_tuple = tuple.__new__


def _execute(
    context: RunContext, executor: Executor, call: Attempt, log: LogBuffer | None
) -> Outcome:
    """Run one attempt where ``executor`` says; while it runs, it is the run's attempt in
    flight (a stop cancels it) and what is written to descriptors 1 and 2 is its log."""
    context.attempt = call
    if log is not None:
        attempt_began(log)
    try:
        return executor.run(call)
    finally:
        restore_process_globals()  # a task may have set sys.stdout to None (docs/reliability.md)
        if log is not None:
            attempt_ended(log)
        context.attempt = None


class StepRunner:
    """Executes one plan step of a run, given the run's shared :class:`RunContext`.

    The runner holds the policies (trigger rules, conditions, retries, timeouts, fallbacks);
    the context holds the state they act on. A run owns one runner; it never subclasses it.
    """

    __slots__ = ("_context", "_emit")

    def __init__(self, context: RunContext) -> None:
        self._context = context
        self._emit = context.emit

    def _verdict(self, node: TaskNode) -> Status | None:
        """Apply the trigger rule: None to run, else the status to record instead."""
        if not node.depends_on or node.trigger is Trigger.ALL_DONE:
            return None
        status_of = self._context.outcomes.status
        failed = skipped = False
        for dep in node.depends_on:
            status = status_of(dep)
            if status in OUTPUT_STATUSES:
                continue
            if status is Status.SKIPPED:
                skipped = True
            else:
                failed = True
        if failed:
            return Status.UPSTREAM_FAILED
        if skipped and node.trigger is Trigger.ALL_SUCCEEDED:
            return Status.SKIPPED
        return None

    def _input_digest(self, node: TaskNode) -> str:
        """Merkle digest of what the task sees: payload, params, each dependency's output and
        input digests. O(dependencies), yet it covers every ancestor."""
        context = self._context
        outcomes = context.outcomes
        output = outcomes.output
        parts = [context.payload_digest, context.params_text(node)]
        deps = node.depends_on
        for dep in sorted(deps) if len(deps) > 1 else deps:
            commit = output(dep)
            out = commit.digest if commit is not None else f"<{outcomes.status(dep)}>"
            parts.append(f"{dep}\x00{out}\x00{outcomes.input_digest(dep) or ''}")
        return hashlib.sha256("\x00".join(parts).encode()).hexdigest()

    def _task_inputs(self, node: TaskNode, step: PlanStep, attempt: int) -> TaskInputs:
        return TaskInputs(self._context, node, step, attempt)

    def _condition(self, node: TaskNode) -> bool | dict[str, str]:
        """Evaluate ``when``: its truth, or an error dict if it raised."""
        assert node.when is not None
        context = self._context
        scope = {
            "payload": loads(context.payload_text),
            "results": ResultsView(context.graph, context.outcomes, node.name),
        }
        try:
            return bool(node.when(scope))
        except Exception as exc:
            return {"type": "ConditionError", "message": f"{type(exc).__name__}: {exc}"}

    def execute(self, step: PlanStep) -> Status:
        """Run one plan step to its final status; its events go through the context."""
        context = self._context
        node = context.graph.nodes[step.task]
        if node.depends_on:
            verdict = self._verdict(node)
            if verdict is not None:
                return self._emit(step, verdict, 0).status
        if node.when is not None:
            truth = self._condition(node)
            if isinstance(truth, dict):
                return self._emit(step, Status.FAILED, 0, error=truth).status
            if not truth:
                return self._emit(step, Status.SKIPPED, 0).status
        executor = context.executor
        clock = context.clock
        cancelled = context.cancelled
        detach = context.detach
        input_digest = self._input_digest(node)
        attempts = node.max_retries + 1
        for attempt in range(1, attempts + 1):
            if attempt > 1 and node.retry_interval:
                clock.sleep(node.retry_interval, cancelled)  # a stop ends the wait at once
            if cancelled.is_set():
                return self._emit(step, Status.CANCELLED, attempt).status
            # Positional on the hot path: keyword calls cost measurably at 100k tasks.
            started = self._emit(step, Status.RUNNING, attempt, None, None, input_digest).started_at
            fn = node.fn
            if fn is None:
                outcome = Outcome(
                    ERROR,
                    error={
                        "type": "MissingCallable",
                        "message": f"task {node.name!r} has no callable",
                    },
                )
            else:
                inputs = self._task_inputs(node, step, attempt)
                log = context.new_log(node.name, attempt)
                io = context.new_io(node.name, attempt)
                call = _new_tuple(
                    Attempt,
                    (node.name, attempt, "task", fn, inputs, node.timeout_seconds, log, clock,
                     detach, False, io),
                )  # fmt: skip
                outcome = _execute(context, executor, call, log)
                if log is not None:
                    if outcome.log is not None:  # it ran where this log could not see it
                        log.load(outcome.log)
                    context.end_log(log)
                if io is not None:
                    outcome = _diverged(context, io, outcome)
            final = self._record(step, node, attempt, outcome, started, Status.SUCCEEDED)
            if final is not Status.FAILED and final is not Status.TIMED_OUT:
                return final
        if node.fallback is not None:
            return self._fallback(step, node, attempts + 1)
        return final

    def _fallback(self, step: PlanStep, node: TaskNode, attempt: int) -> Status:
        """Run the fallback once every attempt failed; it has no ``running`` event."""
        assert node.fallback is not None
        context = self._context
        started = context.clock.now()
        log = context.new_log(node.name, attempt)
        io = context.new_io(node.name, attempt)
        call = Attempt(
            node.name,
            attempt,
            "fallback",
            node.fallback,
            self._task_inputs(node, step, attempt),
            None,
            log,
            context.clock,
            context.detach,
            False,
            io,
        )
        outcome = _execute(context, context.executor, call, log)
        if log is not None:
            if outcome.log is not None:
                log.load(outcome.log)
            context.end_log(log)
        if io is not None:
            outcome = _diverged(context, io, outcome)
        return self._record(step, node, attempt, outcome, started, Status.FALLBACK)

    def _record(
        self,
        step: PlanStep,
        node: TaskNode,
        attempt: int,
        outcome: Outcome,
        started: float | None,
        success: Status,
    ) -> Status:
        """Turn an attempt's outcome into its terminal event (committing an output on success),
        said to be the work of the outcome's worker when it names one."""
        worker = outcome.worker
        if worker is None:
            return self._terminal(step, node, attempt, outcome, started, success)
        context = self._context
        own, context.worker = context.worker, worker
        try:
            return self._terminal(step, node, attempt, outcome, started, success)
        finally:
            context.worker = own

    def _terminal(
        self,
        step: PlanStep,
        node: TaskNode,
        attempt: int,
        outcome: Outcome,
        started: float | None,
        success: Status,
    ) -> Status:
        kind = outcome.kind
        if kind == OK:
            text = outcome.text
            if text is None:
                try:
                    text = check_json(outcome.value, "$output")
                except CanonicalError as exc:
                    return self._emit(
                        step,
                        Status.FAILED,
                        attempt,
                        started_at=started,
                        error={"type": "OutputNotJSON", "message": str(exc)},
                    ).status
            out_digest = digest_text(text)
            returned = self._context.returned
            if returned is not None and text[0] in "[{":
                value = outcome.value if outcome.text is None else loads(text)
                returned[node.name] = json.dumps(value, ensure_ascii=False)
            # The commit happens before the event so listeners see the output with its event.
            self._context.commit(node.name, text, out_digest)
            return self._emit(step, success, attempt, started, None, None, out_digest).status
        if kind == TIMEOUT:
            return self._emit(
                step,
                Status.TIMED_OUT,
                attempt,
                started_at=started,
                error={
                    "type": "Timeout",
                    "message": f"attempt exceeded {node.timeout_seconds:g} s",
                },
            ).status
        if kind == CANCELLED:
            return self._emit(
                step,
                Status.CANCELLED,
                attempt,
                started_at=started,
                error=outcome.error or dict(STOPPED),
            ).status
        if outcome.exception is not None:
            self._context.exceptions[node.name] = outcome.exception
        return self._emit(
            step,
            Status.FAILED,
            attempt,
            started_at=started,
            error=outcome.error,
            traceback=outcome.traceback,
        ).status


def _diverged(context: RunContext, io: AttemptIO, outcome: Outcome) -> Outcome:
    """Close the attempt's recorder; an attempt that asked the recording something it does not
    hold fails, whatever the task made of the refusal (a stop by the user stays a stop)."""
    assert context.calls is not None
    if outcome.calls is not None:  # it ran in another process: take what it recorded there
        try:
            io.absorb(outcome.calls)
        except ValueError as exc:
            io.diverge(f"its recording came back unreadable: {exc}")
    line = context.calls.close(io)
    if line is None or outcome.kind is CANCELLED:
        return outcome
    return Outcome(ERROR, error={"type": "CallDiverged", "message": line}, worker=outcome.worker)
