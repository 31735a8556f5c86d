"""The executor contains what a task raises, and a task cannot switch timeouts off for others."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from harness_tui.engine.attempt import Attempt
from harness_tui.executors.threads import ThreadExecutor


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


def _raise(exc: BaseException) -> Any:
    def task(inputs: Mapping[str, Any]) -> Any:
        raise exc.with_traceback(None)  # a fresh traceback, however often the case runs

    return task


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        (SystemExit(0), {"type": "SystemExit", "message": "0"}),
        (SystemExit(3), {"type": "SystemExit", "message": "3"}),
        (BaseException("bare"), {"type": "BaseException", "message": "bare"}),
        (GeneratorExit(), {"type": "GeneratorExit", "message": ""}),
        (
            _Unprintable(),
            {"type": "_Unprintable", "message": "<str() of the exception raised RuntimeError>"},
        ),
        (ValueError("\ud800"), {"type": "ValueError", "message": "\\ud800"}),
    ],
)
@pytest.mark.parametrize("timeout", [None, 5.0])  # called directly, and under the signal timer
def test_whatever_a_task_raises_is_its_failure(
    exc: BaseException, error: dict[str, str], timeout: float | None
) -> None:
    call = Attempt("t", 1, "task", _raise(exc), {}, timeout)
    outcome = ThreadExecutor().run(call)
    assert (outcome.kind, outcome.error) == ("error", error)
    assert outcome.traceback is not None and "in task" in outcome.traceback
    assert "here.py" not in outcome.traceback  # starts at the task's own frame


def test_keyboard_interrupt_in_a_task_stops_instead_of_failing() -> None:
    outcome = ThreadExecutor().run(Attempt("t", 1, "task", _raise(KeyboardInterrupt()), {}, None))
    assert outcome.kind == "cancelled"
    assert outcome.error is not None and outcome.error["type"] == "KeyboardInterrupt"


def _swallow(inputs: Mapping[str, Any]) -> str:
    try:
        time.sleep(5)
    except BaseException:
        time.sleep(5)  # the timeout is swallowed once; the repeated alarm ends this too
    return "late"


def _block_alarm(inputs: Mapping[str, Any]) -> str:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(0.3)
    return "late"


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timers")
def test_a_task_cannot_outlast_or_disable_the_signal_timeout() -> None:
    assert threading.current_thread() is threading.main_thread()
    executor = ThreadExecutor()
    try:
        started = time.monotonic()
        assert executor.run(Attempt("t", 1, "task", _swallow, {}, 0.2)).kind == ("timeout")
        assert time.monotonic() - started < 2
        # A task that blocks SIGALRM overruns (in-process cannot stop it) ...
        assert executor.run(Attempt("b", 1, "task", _block_alarm, {}, 0.1)).kind == ("timeout")
        assert signal.SIGALRM not in signal.pthread_sigmask(signal.SIG_BLOCK, ())
        # ... but the next task's timeout works again.
        started = time.monotonic()
        assert executor.run(Attempt("t", 1, "task", _swallow, {}, 0.2)).kind == ("timeout")
        assert time.monotonic() - started < 2
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
