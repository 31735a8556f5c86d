"""The one root of every error harness-tui raises about its input or a run.

Each layer has its own subclasses carrying what a person needs to fix the input (file, line,
task name); front ends catch :class:`HarnessError` alone and show its message. A task's own
exceptions are never raised through the engine: they are recorded in the trace.
"""

from __future__ import annotations

__all__ = ["HarnessError", "TaskFailedError"]


class HarnessError(Exception):
    """Something harness-tui was given cannot be used; the message says what and where."""


class TaskFailedError(HarnessError, RuntimeError):
    """A run asked to return its results (the article's ``run(payload)``) had a task that
    still failed after its retries and had no fallback.

    Attributes:
        task: the task that failed.
        attempts: how many attempts it made.
        error: its final ``{"type", "message"}``.
        result: the run's ``{"payload", "results", "trace"}`` up to the failure.
    """

    def __init__(
        self, task: str, attempts: int, error: dict[str, str], result: dict[str, object]
    ) -> None:
        self.task = task
        self.attempts = attempts
        self.error = error
        self.result = result
        super().__init__(
            f"task {task!r} failed after {attempts} attempt(s): "
            f"{error.get('type', 'Error')}: {error.get('message', '')}"
        )

    @classmethod
    def stopped(cls, status: str, result: dict[str, object]) -> TaskFailedError:
        """The run did not fail but did not succeed either (``cancelled``, ``running``)."""
        error = cls("", 0, {"type": "Stopped", "message": status}, result)
        error.args = (f"the run did not finish: it is {status}",)
        return error
