"""What a task prints or logs, captured per attempt (docs/reference.md, "Command line").

``sys.stdout`` and ``sys.stderr`` are replaced by a :class:`_RoutingStream` (once, and again
whenever someone swaps the stream out, e.g. a test runner or Textual), and a handler is added to
the root logger. Both route by a :class:`~contextvars.ContextVar` holding the current
attempt's :class:`LogBuffer`: the executor sets it around the call of user code, so routing
costs one context lookup per write and nothing at all when no task runs.

Threads: a new thread does not inherit the context of its parent in Python 3.11, so
``threading.Thread.start`` is patched to hand the starting attempt's buffer, and its recorder of
calls (:mod:`.recorded_calls`), to the thread (only when an attempt is running; otherwise it is
the original ``start``). Threads that were started
outside an attempt (a pool created before the run) are not attributed: their writes go to the
real stream. A thread that outlives its attempt (or an attempt that timed out) writes into the
run's ``unattributed`` buffer.

Below Python's streams, :func:`descriptors` (used by the commands that run tasks, and the
workbench) points file descriptors 1 and 2 at pipes for its duration, so what a task or a child
process it starts writes there (``os.write(1, ...)``, ``subprocess.run(["echo", ...])``) joins
the log of the attempt in flight; when none, or several at once (workers), is in flight, the
run's ``unattributed`` buffer; before any run, the real standard error. The harness's own
output goes to the real descriptors, duplicated before the switch.

The logs are never part of the canonical trace or any digest (I3): the engine keeps them in the
run's context beside the state, not in it.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import io
import logging
import os
import select
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any, NamedTuple

from .recorded_calls import current as current_io

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_LOG_LIMIT",
    "AttemptLog",
    "LogBuffer",
    "LogListener",
    "attempt_began",
    "attempt_ended",
    "current",
    "descriptors",
    "drain",
    "install",
    "restore_process_globals",
    "set_level",
    "truncation_mark",
    "utf8_safe",
]

DEFAULT_LEVEL = logging.INFO
"""Records a task logs at this level or above join its log even where the logging
configuration drops them (by default Python lets only WARNING and up through)."""

DEFAULT_LOG_LIMIT = 1024 * 1024
"""Characters kept per attempt (1 MiB of ASCII); the rest is dropped behind a visible mark."""

LogListener = Callable[[str, int, str], None]
"""Called with ``(task, attempt, text)`` for every piece of captured text, as it is written."""


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` escapes: they cannot be stored,
    exported or printed as UTF-8, and a task's print must not break the run's recording."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def truncation_mark(limit: int) -> str:
    """The line that ends a log cut at ``limit`` characters."""
    return f"\n[harness-tui: log truncated after {limit:,} characters]\n"


class AttemptLog(NamedTuple):
    """What one attempt printed or logged.

    Attributes:
        text: stdout, stderr and ``logging`` records interleaved as written (ends with the
            truncation mark when cut).
        truncated: the attempt wrote more than the limit.
    """

    text: str
    truncated: bool = False


UNATTRIBUTED = ("", 0)
"""The ``(task, attempt)`` key under which a run's unattributed output is stored and exported:
what threads wrote after the attempt that started them ended."""


# One lock for every buffer: writes are rare next to attempts, and a buffer per attempt is
# then one allocation less on the hot path.
_lock = threading.Lock()


class LogBuffer:
    """A bounded, thread-safe text buffer for one attempt (or a run's unattributed output).

    Args:
        task: the task name ("" for a run's unattributed buffer).
        attempt: the attempt number (0 for the unattributed buffer).
        limit: characters kept; later writes are dropped and the log is marked truncated.
        spill: where writes go once this buffer is closed (the attempt ended but a thread it
            started goes on writing).
        listeners: called with each piece of text kept (live views, ``--logs``).
    """

    __slots__ = ("_parts", "_size", "attempt", "closed", "limit", "listeners", "spill", "task",
                 "truncated")  # fmt: skip

    def __init__(
        self,
        task: str,
        attempt: int,
        limit: int = DEFAULT_LOG_LIMIT,
        spill: LogBuffer | None = None,
        listeners: list[LogListener] | None = None,
    ) -> None:
        self.task = task
        self.attempt = attempt
        self.limit = limit
        self.spill = spill
        self.listeners = listeners if listeners is not None else []
        self.closed = False
        self.truncated = False
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> None:
        """Keep ``text`` (up to the limit); after :meth:`close`, pass it to the spill buffer."""
        if not text.isascii():
            text = utf8_safe(text)
        if self.closed:
            if self.spill is not None:
                self.spill.write(text)
            return
        with _lock:
            if self.truncated or not text:
                return
            room = self.limit - self._size
            if len(text) > room:
                text = text[:room] + truncation_mark(self.limit)
                self.truncated = True
            self._parts.append(text)
            self._size += len(text)
        if self.listeners:
            self._tell(text)

    def _tell(self, text: str) -> None:
        # A listener that prints (``--logs`` writes to stderr) must reach the real stream,
        # not this buffer again.
        token = _current.set(None)
        try:
            for listener in self.listeners:
                listener(self.task, self.attempt, text)
        finally:
            _current.reset(token)

    def close(self) -> None:
        """The attempt ended: later writes (from threads it left running) go to the spill."""
        self.closed = True

    def load(self, log: AttemptLog) -> None:
        """Fill the buffer with a recorded log (a resumed or replayed run)."""
        self.write(log.text)
        if log.truncated:
            with _lock:
                self.truncated = True

    def snapshot(self) -> AttemptLog:
        """The text so far (safe while the attempt is still writing)."""
        with _lock:
            if len(self._parts) > 1:
                self._parts[:] = ["".join(self._parts)]
            return AttemptLog(self._parts[0] if self._parts else "", self.truncated)

    def __len__(self) -> int:
        return self._size


_current: contextvars.ContextVar[LogBuffer | None] = contextvars.ContextVar(
    "harness_attempt_log", default=None
)
current = _current
"""The buffer of the attempt running in this context, or None."""


class _RoutingStream:
    """Stands in for ``sys.stdout`` or ``sys.stderr``: text written while an attempt runs goes
    to its buffer, anything else to the stream it replaced (every other attribute too)."""

    def __init__(self, real: IO[str]) -> None:
        self.real = real

    def write(self, text: str) -> int:
        buffer = _current.get()
        if buffer is None:
            return self.real.write(text)
        if _capture:  # what this attempt wrote to the descriptors before comes first
            _capture[0].drain()
        buffer.write(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if _current.get() is None:
            self.real.flush()

    def isatty(self) -> bool:
        # Inside an attempt the output goes to a buffer, not a terminal.
        return _current.get() is None and self.real.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _LogHandler(logging.Handler):
    """Root-logger handler: a record emitted during an attempt joins that attempt's log.

    It keeps whatever the logging configuration lets through (a logger's level still
    decides); outside attempts it does nothing.
    """

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        buffer = _current.get()
        if buffer is None:
            # Our handler on the root logger turns off logging's last resort (warnings to
            # stderr when nothing is configured): keep that behaviour outside attempts.
            last = logging.lastResort
            if last is not None and record.levelno >= last.level and _alone():
                last.handle(record)
            return
        try:
            buffer.write(self.format(record) + "\n")
        except Exception:  # logging's own contract: a broken record must not kill the task
            self.handleError(record)


def _alone() -> bool:
    return logging.getLogger().handlers == [_handler]


_handler = _LogHandler()
_root = logging.getLogger()
_original_start = threading.Thread.start
_original_enabled = logging.Logger.isEnabledFor
_original_handle = logging.Logger.handle
_level = [DEFAULT_LEVEL]  # the capture level (a list: set_level changes it in place)


def set_level(level: int) -> None:
    """Capture a task's records at ``level`` and above whatever the loggers' levels
    (:data:`DEFAULT_LEVEL` by default); lower records only where logging lets them through."""
    _level[0] = level


def _enabled(self: logging.Logger, level: int) -> bool:
    """``Logger.isEnabledFor``, and yes inside an attempt from the capture level up: the
    record is made, then :func:`_handle` keeps it to the attempt's log."""
    if _original_enabled(self, level):
        return True
    return (
        level >= _level[0]
        and _current.get() is not None
        and not self.disabled
        and self.manager.disable < level
    )


def _handle(self: logging.Logger, record: logging.LogRecord) -> None:
    """``Logger.handle``; a record that exists only because the capture asked for it (below
    the logger's own level) goes to the attempt's log alone: every other handler, the user's
    or Dask's, receives exactly what it did without the capture."""
    if record.levelno >= self.getEffectiveLevel() or _current.get() is None:
        _original_handle(self, record)
    elif not self.disabled and self.filter(record):
        _handler.handle(record)


def _start(self: threading.Thread) -> None:
    """``Thread.start`` that hands the starting attempt's buffer and recorder to the new
    thread."""
    buffer = _current.get()
    io = current_io.get()
    if buffer is not None or io is not None:
        run = self.run  # the bound method: a subclass's own ``run`` is kept

        def attributed() -> None:
            _current.set(buffer)  # the new thread's own, empty context
            current_io.set(io)
            run()

        self.run = attributed  # type: ignore[method-assign]
    _original_start(self)


def install() -> None:
    """Route ``sys.stdout``, ``sys.stderr``, ``logging`` and new threads (idempotent; cheap
    enough to call before every attempt, which re-installs a stream someone replaced).

    ``Logger.isEnabledFor`` and ``Logger.handle`` are wrapped so that a task's records from
    the capture level up (:func:`set_level`) are made and captured even where the loggers'
    levels drop them, without reaching any other handler; outside attempts both behave as
    the originals."""
    restore_process_globals()
    stdout, stderr = sys.stdout, sys.stderr
    if stdout is not None and stdout.__class__ is not _RoutingStream:
        sys.stdout = _installed["stdout"] = _RoutingStream(stdout)
    if stderr is not None and stderr.__class__ is not _RoutingStream:
        sys.stderr = _installed["stderr"] = _RoutingStream(stderr)
    # ``logging.basicConfig(force=True)`` removes every root handler: look each time.
    if _handler not in _root.handlers:
        _root.addHandler(_handler)
    if threading.Thread.start is not _start:
        threading.Thread.start = _start  # type: ignore[method-assign]
    if logging.Logger.isEnabledFor is not _enabled:
        logging.Logger.isEnabledFor = _enabled  # type: ignore[method-assign]
        logging.Logger.handle = _handle  # type: ignore[method-assign]


_installed: dict[str, _RoutingStream] = {}  # the streams install() put in place last


def restore_process_globals() -> None:
    """Put back ``sys.stdout`` or ``sys.stderr`` that a task set to ``None``: the routing
    stream installed last, else the interpreter's own; and ``threading.excepthook`` set to
    ``None``, without which no thread can be made (called after every attempt, so the next
    attempt, the executor's workers and the harness's own output still work)."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, _installed.get(name) or getattr(sys, f"__{name}__"))
    if threading.excepthook is None:
        threading.excepthook = threading.__excepthook__


# -- file descriptors 1 and 2 --------------------------------------------------------------

_flight_lock = threading.Lock()
_in_flight: list[LogBuffer] = []  # attempt buffers open now, oldest first
_spill: list[LogBuffer] = []  # the last run's unattributed buffer (one at most)
_capture: list[_Descriptors] = []  # the active capture (one at most)


def attempt_began(buffer: LogBuffer) -> None:
    """An attempt writing into ``buffer`` starts: descriptor output is now its."""
    with _flight_lock:
        _in_flight.append(buffer)
        if buffer.spill is not None:
            _spill[:] = [buffer.spill]


def attempt_ended(buffer: LogBuffer) -> None:
    """The attempt ended: what it wrote to the descriptors (already in the pipes, since its
    writes returned) is read into its buffer before later output goes elsewhere."""
    if _capture:
        _capture[0].drain()
    with _flight_lock:
        if buffer in _in_flight:
            _in_flight.remove(buffer)


def drain() -> None:
    """Route what descriptors 1 and 2 hold now: whatever a write that has returned put
    there is in its log (or the unattributed one) after this."""
    if _capture:
        _capture[0].drain()


def _route(text: str) -> None:
    """Descriptor output to the one attempt in flight, else the unattributed buffer, else
    (no run yet) the real standard error."""
    with _flight_lock:
        flying, spill = list(_in_flight), list(_spill)
    if len(flying) == 1:
        flying[0].write(text)
    elif flying and flying[0].spill is not None:
        flying[0].spill.write(text)
    elif spill:
        spill[0].write(text)
    else:
        target = _capture[0].saved[2] if _capture else 2
        with contextlib.suppress(OSError):
            os.write(target, text.encode("utf-8", "backslashreplace"))


class _Descriptors:
    """One pipe in place of descriptors 1 and 2 (they interleave as a terminal shows them,
    and an attempt's end costs one read to drain), and a thread that reads it."""

    def __init__(self) -> None:
        self.saved: dict[int, int] = {}
        self.read = -1
        self.decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
        self.read_lock = threading.Lock()
        self.swapped: list[tuple[Any, str, Any]] = []
        self.thread: threading.Thread | None = None
        self.left: list[LogBuffer] | None = None
        """Once closed: where later output of a child still holding the pipe goes (the last
        run's unattributed buffer, or nowhere), never the terminal the user is back at."""

    def open(self) -> None:
        read, write = os.pipe()
        os.set_blocking(read, False)
        for fd in (1, 2):
            self.saved[fd] = os.dup(fd)
            os.dup2(write, fd)
        os.close(write)
        self.read = read
        self._swap_streams()
        self.thread = threading.Thread(target=self._pump, name="harness-descriptors", daemon=True)
        _original_start(self.thread)  # not attributed to any attempt

    def _swap_streams(self) -> None:
        """Python's streams on descriptors 1 and 2 write to the saved real ones instead."""
        made: dict[int, IO[str]] = {}
        for name in ("stdout", "stderr", "__stdout__", "__stderr__"):
            stream = getattr(sys, name)
            owner, attribute = (
                (stream, "real") if isinstance(stream, _RoutingStream) else (sys, name)
            )
            real = getattr(owner, attribute)
            try:
                fd = real.fileno()
                real.flush()
            except (OSError, ValueError, AttributeError):
                continue  # not a real file (a test runner's buffer)
            if fd not in self.saved:
                continue
            if fd not in made:
                made[fd] = io.TextIOWrapper(
                    io.FileIO(self.saved[fd], "w", closefd=False),
                    encoding=getattr(real, "encoding", None) or "utf-8",
                    errors=getattr(real, "errors", None) or "strict",
                    line_buffering=getattr(real, "line_buffering", False),
                    write_through=True,
                )
            self.swapped.append((owner, attribute, real))
            setattr(owner, attribute, made[fd])

    def _pump(self) -> None:
        while True:
            read = self.read
            if read < 0:
                return
            with contextlib.suppress(OSError, ValueError):
                select.select([read], [], [])
            if not self.drain():
                return

    def drain(self) -> bool:
        """Route what the pipe holds now; False at its end (every writer closed it)."""
        with self.read_lock:
            while self.read >= 0:
                try:
                    data = os.read(self.read, 65536)
                except BlockingIOError:
                    return True
                except OSError:
                    data = b""
                if not data:
                    # Closed here, under the lock, and forgotten: a later drain must never
                    # read the descriptor number once something else has reused it.
                    with contextlib.suppress(OSError):
                        os.close(self.read)
                    self.read = -1
                    break
                text = self.decoder.decode(data)
                if not text:
                    continue
                if self.left is None:
                    _route(text)
                elif self.left:
                    self.left[0].write(text)
            return False

    def close(self) -> None:
        for owner, attribute, real in reversed(self.swapped):
            with contextlib.suppress(OSError, ValueError):
                getattr(owner, attribute).flush()
            setattr(owner, attribute, real)
        for fd, saved in self.saved.items():
            os.dup2(saved, fd)  # closes our pipe's write end there
            os.close(saved)
        if self.thread is not None:
            self.thread.join(timeout=1.0)  # a child still holding the pipe keeps it reading


def _others_running(capture: _Descriptors) -> bool:
    """Threads other than this one and the capture's reader are still running."""
    ours = {threading.current_thread(), capture.thread}
    return any(thread not in ours for thread in threading.enumerate())


@contextlib.contextmanager
def descriptors(linger: bool = False) -> Iterator[None]:
    """Capture what is written straight to file descriptors 1 and 2 into the attempts' logs
    while the block runs (see the module's docstring). Nested uses share the outer one.

    ``linger`` is for a block after which the process ends (the workbench): if threads other
    than ours still run then (a task left running, a thread it started), the capture is left
    in place for the rest of the process, so that what they write while it ends goes to the
    run's unattributed log, never to the shell the user is back at. The harness's own
    output still reaches the terminal through Python's streams."""
    if _capture:
        yield
        return
    capture = _Descriptors()
    capture.open()
    _capture.append(capture)
    try:
        yield
    finally:
        capture.drain()
        if linger and _others_running(capture):
            install()  # Textual put back the streams it found: route attempts' prints again
        else:
            _end(capture)


def _end(capture: _Descriptors) -> None:
    with _flight_lock:
        capture.left = list(_spill)
        _spill.clear()
    _capture.clear()
    capture.close()
    if threading.Thread.start is _start:
        install()  # streams swapped back: what attempts' threads print still routes
