"""``--executor threads`` (the default): attempts run in this process, in the thread that
asks for them: the run's own thread, or one of its ``--workers`` threads.

How an attempt runs here (captured output, a signal or thread timeout, ``async def`` tasks on
the harness's event loop) is the attempt's own: see :mod:`harness_tui.engine.attempt`. This
executor only chooses how a stop reaches attempts without a timeout.
"""

from __future__ import annotations

from ..engine.attempt import Attempt, Executor, Outcome, close_here

__all__ = ["SerialExecutor", "ThreadExecutor"]


class ThreadExecutor(Executor):
    """Runs each attempt in the thread that asks for it.

    Args:
        isolate: run every attempt in a helper thread, not only those with a timeout, so that
            a stop reaches any attempt at once (what an interactive front end wants; a
            parallel run's workers run attempts in their own threads, and a stop takes over
            the job of one that does not return).
        timeouts: ``auto`` (signal on the main thread where possible, else thread),
            ``signal`` or ``thread``.
    """

    name = "threads"

    def __init__(self, isolate: bool = False, timeouts: str = "auto") -> None:
        if timeouts not in ("auto", "signal", "thread"):
            raise ValueError(f"timeouts must be auto, signal or thread, not {timeouts!r}")
        self.isolate = isolate
        self.timeouts = timeouts
        self._detach = True if isolate else None

    def run(self, attempt: Attempt) -> Outcome:
        """Run the attempt here (see :meth:`Attempt.__call__`)."""
        return attempt(detach=self._detach, timeouts=self.timeouts)

    def close(self) -> None:
        """Let the calling thread's helper thread end once it is idle."""
        close_here()


SerialExecutor = ThreadExecutor
"""The name this executor had before executors had a package of their own (it runs attempts
in worker threads too, not only serially)."""
