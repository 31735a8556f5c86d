"""``async def`` tasks: awaited on one event loop the harness owns, in its own daemon thread
(never the caller's or the app's loop), so coroutines of parallel tasks overlap. A timeout or a
stop cancels the coroutine for real (``CancelledError`` inside it)."""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from .capture import current, install
from .failures import error_of, traceback_of
from .outcome import OutcomeKind
from .recorded_calls import AttemptIO
from .recorded_calls import current as current_io

if TYPE_CHECKING:  # imported when the first async task starts (is_async needs only inspect)
    import asyncio
    import concurrent.futures

__all__ = ["is_async", "run_coroutine"]

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine to await (``async def``, a partial of one, or
    a workflow reference that resolves to one). A reference is resolved (imported) here, as
    it would be by the call; one that does not resolve is not async (the call then fails the
    attempt with the reason). A task run in a child process awaits there.

    Asked once per attempt: the answer is kept per callable (a bounded table)."""
    known = _known.get(fn)
    if known is not None:
        return known
    target = fn
    if getattr(target, "isolation", "in-process") != "process":
        resolve = getattr(target, "resolve", None)
        if resolve is not None:
            try:
                target = resolve()
            except Exception:
                return False  # not kept: the reference may resolve later
        while isinstance(target, functools.partial):
            target = target.func
        answer = inspect.iscoroutinefunction(target)
    else:
        answer = False
    if len(_known) >= _KNOWN_MAX:
        _known.clear()
    _known[fn] = answer
    return answer


_KNOWN_MAX = 4096
_known: dict[Any, bool] = {}


def _harness_loop() -> asyncio.AbstractEventLoop:
    """The harness's event loop, started on first use in a daemon thread."""
    import asyncio

    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="harness-asyncio", daemon=True)
            thread.start()
            _loop = loop
        return _loop


async def _attempt(
    fn: Callable[[Mapping[str, Any]], Coroutine[Any, Any, Any]],
    inputs: Mapping[str, Any],
    log: Any,
    io: AttemptIO | None = None,
) -> Any:
    if log is not None:  # this task's context is its own: the attempt's output goes to log
        install()
        current.set(log)
    if io is not None:  # and its requests to the attempt's recorder
        install()
        current_io.set(io)
    return await fn(inputs)


def run_coroutine(
    fn: Callable[[Mapping[str, Any]], Coroutine[Any, Any, Any]],
    inputs: Mapping[str, Any],
    log: Any,
    done: threading.Event,
    io: AttemptIO | None = None,
) -> tuple[concurrent.futures.Future[Any], Callable[[], tuple[str, Any, Any, Any]]]:
    """Start one attempt of ``fn`` on the harness loop; ``done`` is set when it ends.

    Returns:
        The future (``cancel()`` it on a timeout or a stop) and a function that gives the
        outcome's fields ``(kind, value, error, traceback)`` once ``done`` is set.
    """
    import asyncio

    future = asyncio.run_coroutine_threadsafe(_attempt(fn, inputs, log, io), _harness_loop())
    future.add_done_callback(lambda _: done.set())

    def outcome() -> tuple[OutcomeKind, Any, Any, Any]:
        if future.cancelled():
            return (OutcomeKind.CANCELLED, None, None, None)
        exc = future.exception()
        if exc is None:
            return (OutcomeKind.OK, future.result(), None, None)
        if isinstance(exc, asyncio.CancelledError):
            return (OutcomeKind.CANCELLED, None, None, None)
        return (OutcomeKind.ERROR, None, error_of(exc), traceback_of(exc))

    return future, outcome
