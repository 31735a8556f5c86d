"""What the outside world answered an attempt: HTTP exchanges and explicit recorded calls.

Each attempt that runs under a :class:`CallSession` gets an :class:`AttemptIO`. The executor
sets it in :data:`current` around the call of user code, as the log capture sets the attempt's
log buffer (:mod:`.capture`, which also hands both to threads the attempt starts). Whatever asks
the outside world something goes through it:

- ``inputs["io"].call(name, fn, *args, **kwargs)`` and functions decorated with
  :func:`recorded` (the :data:`io` object below);
- HTTP made through ``httpx`` and ``urllib3`` (``requests``, ``openai``, ``anthropic``): the
  interception lives outside the engine (:mod:`harness_tui.interception`) and calls
  :meth:`AttemptIO.begin` for every request.

Every exchange gets the attempt's next sequence number (HTTP and calls share one), and is
answered according to the session's :class:`CallMode`: ``live`` sends everything, ``fill``
answers what the recording has and sends the rest, ``offline`` answers from the recording and
sends nothing: an unmatched request fails the attempt (it is *diverged*, even when the task
catches the error), with one line naming the nearest recorded request. Requests made by
threads outside any attempt are sent and kept as unattributed.

Recordings live beside the trace, never in it: no digest depends on them (I3).
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any, ParamSpec, TypeVar

from .call_matching import (
    MatchKey,
    Mismatch,
    differences,
    match_key,
    nearest,
    parse_volatile,
)
from .canonical import CanonicalError, check_json, loads
from .clock import Clock, SystemClock
from .exchanges import Exchange, Headers, error_json
from .replayed_errors import RecordedCallError, rebuild

__all__ = [
    "SECRET_HEADERS",
    "AttemptIO",
    "CallDiverged",
    "CallMode",
    "CallSession",
    "Exchange",
    "Mismatch",
    "Pending",
    "RecordedCallError",
    "RecordedCalls",
    "current",
    "error_json",
    "from_ticket",
    "io",
    "recorded",
    "target",
]

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
    }
)
"""Header names never stored, in requests or answers (compared in lower case)."""


class CallMode(StrEnum):
    """How a re-execution treats the outside world."""

    OFFLINE = "offline"
    """Answer every request from the recording; send nothing (the network is closed)."""
    FILL = "fill"
    """Answer what the recording has; send (and record) what it has not."""
    LIVE = "live"
    """Ignore the recording: send everything."""


class CallDiverged(ConnectionError):
    """An offline request the recording cannot answer: it was not sent, and the attempt fails
    whatever the task does with this error."""


class Pending:
    """A request on its way: either answered from the recording (:attr:`answer`) or sent, and
    then completed with :meth:`responded`, :meth:`failed` or :meth:`returned`."""

    __slots__ = ("answer", "body", "headers", "io", "kind", "method", "seq", "started", "url")

    def __init__(
        self,
        io: AttemptIO,
        seq: int,
        kind: str,
        method: str,
        url: str,
        headers: Headers,
        body: bytes | None,
        answer: Exchange | None,
    ) -> None:
        self.io = io
        self.seq = seq
        self.kind = kind
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.answer = answer
        self.started = 0.0
        if answer is not None:  # it takes what the recorded one took
            io.keep(replace(answer, seq=seq, request_headers=headers, request_body=body))
        elif io.session.record:
            self.started = io.session.clock.now()

    def _keep(self, **answer: Any) -> None:
        session = self.io.session
        if not session.record:
            return
        took = round(max(session.clock.now() - self.started, 0.0), 6)
        base = Exchange(self.seq, self.kind, self.method, self.url, self.headers, self.body)
        self.io.keep(replace(base, duration=took, **answer))

    def responded(
        self,
        status: int,
        headers: Iterable[tuple[str, str]],
        chunks: Sequence[bytes],
        error: BaseException | None = None,
    ) -> None:
        """The answer came: its body as received, chunk by chunk, and the error that cut it
        short (a read timeout in the middle of a stream), if any."""
        if self.answer is None:
            self._keep(
                status=status,
                response_headers=self.io.session.clean(headers),
                chunks=tuple(chunks),
                error=None if error is None else error_json(error),
            )

    def failed(self, exc: BaseException) -> None:
        """No answer came (or the call raised): keep the error to raise it again."""
        if self.answer is None:
            self._keep(error=error_json(exc))

    def returned(self, value: Any) -> None:
        """A recorded call returned ``value`` (JSON)."""
        if self.answer is None:
            self._keep(value=value)


_lock = threading.Lock()


class AttemptIO:
    """The recorder of one attempt (or of a run's unattributed requests).

    Args:
        session: the run's session.
        task: the task name ("" for the unattributed recorder).
        attempt: the attempt number (0 for the unattributed recorder).
        recorded: what the recording holds for this attempt (answers in ``offline`` and
            ``fill``), or None to send everything.
    """

    __slots__ = ("_answers", "_counts", "_seq", "attempt", "closed", "divergence", "exchanges",
                 "guarded", "mismatch", "session", "task")  # fmt: skip

    def __init__(
        self,
        session: CallSession,
        task: str,
        attempt: int,
        recorded: Sequence[Exchange] | None = None,
    ) -> None:
        self.session = session
        self.task = task
        self.attempt = attempt
        self.exchanges: list[Exchange] = []
        self.divergence: str | None = None
        self.mismatch: Mismatch | None = None  # the request that diverged, when one did
        self.closed = False
        self.guarded = recorded is not None and session.mode is CallMode.OFFLINE
        self._seq = 0
        self._counts: dict[MatchKey, int] = {}
        self._answers: dict[tuple[MatchKey, int], Exchange] | None = None
        if recorded is not None and session.mode is not CallMode.LIVE:
            answers: dict[tuple[MatchKey, int], Exchange] = {}
            seen: dict[MatchKey, int] = {}
            for exchange in sorted(recorded, key=lambda e: e.seq):
                key = session.key(exchange.method, exchange.url, exchange.request_body)
                count = seen.get(key, 0)
                seen[key] = count + 1
                answers[(key, count)] = exchange
            self._answers = answers

    def begin(
        self,
        kind: str,
        method: str,
        url: str,
        headers: Iterable[tuple[str, str]],
        body: bytes | None,
    ) -> Pending:
        """Number a request and find its recorded answer.

        Raises:
            CallDiverged: offline, and the recording has no answer for it (the attempt is then
                marked diverged).
        """
        answer = None
        if self._answers is None:  # nothing to match against: no key to compute
            with _lock:
                seq = self._seq
                self._seq += 1
        else:
            key = self.session.key(method, url, body)
            with _lock:
                seq = self._seq
                self._seq += 1
                count = self._counts.get(key, 0)
                self._counts[key] = count + 1
            answer = self._answers.get((key, count))
            if answer is None and self.session.mode is CallMode.OFFLINE:
                raise CallDiverged(self.diverge(self._unmatched(key, count)))
        clean = self.session.clean(headers)
        return Pending(self, seq, kind, method, url, clean, body, answer)

    def _unmatched(self, key: MatchKey, count: int) -> str:
        what = f"request {key[0]} {key[1]}" if key[0] != "CALL" else f"call {key[1]!r}"
        answers = self._answers or {}
        if count and (key, 0) in answers:
            return f"{what} was made {count + 1} times, the recording has it {count} times"
        found = nearest([k for k, _ in answers], key)
        with _lock:
            if self.mismatch is None:
                self.mismatch = Mismatch(key, found)
        if found is None:
            return f"{what} was not recorded (the recording holds no request for this attempt)"
        near = f"{found[0]} {found[1]}" if found[0] != "CALL" else f"call {found[1]!r}"
        changed = ", ".join(differences(found, key)) or "differs"
        return f"{what} was not recorded; nearest recorded {near}: {changed}"

    def diverge(self, why: str) -> str:
        """Mark the attempt diverged (the first reason is kept) and return its one line."""
        line = f"task {self.task!r} attempt {self.attempt}: {why}"
        with _lock:
            if self.divergence is None:
                self.divergence = line
        return line

    def keep(self, exchange: Exchange) -> None:
        """Keep an exchange (a closed attempt's late ones go to the unattributed recorder)."""
        if not self.session.record:
            return
        if self.closed and self is not self.session.unattributed:
            self.session.unattributed.keep(exchange)
            return
        with _lock:
            self.exchanges.append(exchange)

    def ticket(self) -> dict[str, Any]:
        """What another process needs to record and answer this attempt as it would be here
        (JSON-ready): the session's settings and this attempt's recorded exchanges."""
        session = self.session
        recorded = None
        if session.mode is not CallMode.LIVE:
            recorded = [e.to_json() for e in session.recording.get((self.task, self.attempt), ())]
        return {
            "task": self.task,
            "attempt": self.attempt,
            "mode": session.mode.value,
            "record": session.record,
            "recorded": recorded,
            "volatile": list(session.volatile_paths),
            "secret_headers": sorted(session.secret_headers),
            "redact": sorted(session.redact),
        }

    def report(self) -> dict[str, Any]:
        """What the attempt was answered, and its divergence, for the process that sent it
        (JSON-ready: the reverse of :meth:`absorb`)."""
        with _lock:
            kept = sorted(self.exchanges, key=lambda e: e.seq)
        mismatch = None if self.mismatch is None else self.mismatch.to_json()
        return {
            "exchanges": [e.to_json() for e in kept],
            "divergence": self.divergence,
            "mismatch": mismatch,
        }

    def absorb(self, report: Mapping[str, Any]) -> None:
        """Take what a copy of this attempt recorded in another process (:meth:`report`).

        Raises:
            ValueError: a malformed exchange (one line).
        """
        exchanges = report.get("exchanges") or []
        if not isinstance(exchanges, list):
            raise ValueError("calls.exchanges: expected a list")
        for index, data in enumerate(exchanges):
            self.keep(Exchange.from_json(data, f"calls.exchanges[{index}]"))
        divergence = report.get("divergence")
        mismatch = Mismatch.from_json(report.get("mismatch"))
        if isinstance(divergence, str):
            with _lock:
                if self.divergence is None:
                    self.divergence = divergence
                    self.mismatch = mismatch

    def call(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call ``fn(*args, **kwargs)`` as a recorded call named ``name``: its JSON return value
        (or its error) is recorded, and answered from the recording when re-run."""
        try:
            body = check_json({"args": list(args), "kwargs": kwargs}, f"$call.{name}")
        except CanonicalError:
            types = [type(a).__name__ for a in (*args, *kwargs.values())]
            body = check_json({"unrecorded_argument_types": types})
        pending = self.begin("call", "CALL", name, (), body.encode("utf-8"))
        answer = pending.answer
        if answer is not None:
            if answer.error is not None:
                raise rebuild(answer.error)
            return loads(check_json(answer.value))
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:
            pending.failed(exc)
            raise
        try:
            text = check_json(value, f"$call.{name}")
        except CanonicalError as exc:
            pending.failed(exc)
            raise
        pending.returned(loads(text))
        return value


class CallSession:
    """The recorded calls of one run, and how to treat the outside world.

    Args:
        mode: what to do with requests (see :class:`CallMode`).
        recording: what an earlier run recorded, by ``(task, attempt)``.
        record: keep this run's exchanges (for its export).
        volatile: JSON paths of request bodies left out of matching (``$.metadata.id``).
        secret_headers: header names never stored, beside :data:`SECRET_HEADERS`.
        redact: keys the recording was redacted with: live requests are redacted alike
            before they are matched.
        clock: what each exchange's duration is measured on (default: the system's; the
            durations are beside the trace, like log timings, never in a digest).

    Raises:
        ValueError: a volatile path cannot be read.
    """

    def __init__(
        self,
        mode: CallMode = CallMode.LIVE,
        recording: Mapping[tuple[str, int], Sequence[Exchange]] | None = None,
        *,
        record: bool = True,
        volatile: Iterable[str] = (),
        secret_headers: Iterable[str] = (),
        redact: Iterable[str] = (),
        clock: Clock | None = None,
    ) -> None:
        self.mode = mode
        self.clock: Clock = clock or SystemClock()
        self.recording = dict(recording or {})
        self.record = record
        self.volatile_paths = tuple(volatile)
        self.volatile = tuple(parse_volatile(path) for path in self.volatile_paths)
        self.secret_headers = SECRET_HEADERS | {name.lower() for name in secret_headers}
        self.redact = frozenset(redact)
        self.attempts: dict[tuple[str, int], AttemptIO] = {}
        self.unattributed = AttemptIO(self, "", 0)

    def key(self, method: str, url: str, body: bytes | None) -> MatchKey:
        """The key a request is matched by under this session's settings."""
        return match_key(method, url, body, self.volatile, self.redact)

    def clean(self, headers: Iterable[tuple[str, str]]) -> Headers:
        """``headers`` without the secret ones."""
        secret = self.secret_headers
        return tuple((n, v) for n, v in headers if n.lower() not in secret)

    def open(self, task: str, attempt: int) -> AttemptIO:
        """The recorder of a new attempt (set it in :data:`current` while the attempt runs;
        when it is :attr:`AttemptIO.guarded`, install :mod:`.offline_guard` first)."""
        global _active
        recorded = None if self.mode is CallMode.LIVE else self.recording.get((task, attempt), ())
        io = AttemptIO(self, task, attempt, recorded)
        with _lock:
            self.attempts[(task, attempt)] = io
        _active = self
        return io

    def close(self, io: AttemptIO) -> str | None:
        """The attempt ended: later exchanges of threads it started are unattributed.

        Returns:
            the divergence line when the attempt diverged (it must then fail).
        """
        io.closed = True
        if not io.exchanges and io.divergence is None:
            with _lock:
                self.attempts.pop((io.task, io.attempt), None)
        return io.divergence

    def finish(self) -> None:
        """The run ended (or was left): requests of threads outside any attempt are no longer
        kept by it (threads its attempts started still report to it)."""
        global _active
        with _lock:
            if _active is self:
                _active = None

    def exchanges(self, task: str, attempt: int) -> tuple[Exchange, ...]:
        """An attempt's exchanges so far, in sequence order."""
        with _lock:
            io = self.attempts.get((task, attempt))
            kept = list(io.exchanges) if io is not None else []
        return tuple(sorted(kept, key=lambda e: e.seq))

    def load(self, recordings: Mapping[tuple[str, int], Sequence[Exchange]]) -> None:
        """Keep exchanges of attempts that ran before (a restored or resumed run)."""
        for (task, attempt), exchanges in recordings.items():
            io = self.unattributed if (task, attempt) == ("", 0) else AttemptIO(self, task, attempt)
            io.exchanges.extend(exchanges)
            io.closed = True
            if io is not self.unattributed:
                with _lock:
                    self.attempts[(task, attempt)] = io

    def mismatch(self, task: str, attempt: int) -> Mismatch | None:
        """The request of an attempt that the recording could not answer, if one diverged."""
        with _lock:
            io = self.attempts.get((task, attempt))
            return None if io is None else io.mismatch

    def divergences(self) -> list[str]:
        """The one line of each attempt that diverged from the recording, in attempt order."""
        with _lock:
            found = [io.divergence for io in self.attempts.values() if io.divergence]
        return found

    def recordings(self) -> dict[tuple[str, int], list[Exchange]]:
        """Every attempt's exchanges in sequence order, the unattributed under ``("", 0)``."""
        with _lock:
            found = {key: sorted(io.exchanges, key=lambda e: e.seq)
                     for key, io in self.attempts.items() if io.exchanges}  # fmt: skip
            if self.unattributed.exchanges:
                found[("", 0)] = list(self.unattributed.exchanges)
        return found


def from_ticket(ticket: Mapping[str, Any]) -> AttemptIO:
    """The recorder of an attempt sent here from another process (:meth:`AttemptIO.ticket`).
    Requests of threads outside it are not kept: this process has no run of its own.

    Raises:
        ValueError: a malformed ticket (one line).
    """
    task, attempt = ticket.get("task"), ticket.get("attempt")
    if not isinstance(task, str) or not isinstance(attempt, int):
        raise ValueError("calls: expected a task name and an attempt number")
    recorded = ticket.get("recorded")
    recording = None
    if isinstance(recorded, list):
        exchanges = [Exchange.from_json(e, f"calls.recorded[{i}]") for i, e in enumerate(recorded)]
        recording = {(task, attempt): exchanges}
    session = CallSession(
        CallMode(ticket.get("mode", "live")),
        recording,
        record=bool(ticket.get("record", True)),
        volatile=ticket.get("volatile") or (),
        secret_headers=ticket.get("secret_headers") or (),
        redact=ticket.get("redact") or (),
    )
    io = session.open(task, attempt)
    session.finish()
    return io


_active: CallSession | None = None
"""The session of the attempt most recently opened: it keeps requests of outside threads."""

current: contextvars.ContextVar[AttemptIO | None] = contextvars.ContextVar(
    "harness_attempt_io", default=None
)
"""The recorder of the attempt running in this context, or None."""


def target() -> AttemptIO | None:
    """Where a request made here goes: the running attempt's recorder, the unattributed
    recorder of the active session (a thread outside any attempt, or one that outlived its
    attempt), or None when no run records."""
    io = current.get()
    if io is not None:
        return io.session.unattributed if io.closed else io
    session = _active
    if session is None or not session.record:
        return None
    return session.unattributed


class RecordedCalls:
    """``inputs["io"]``: recorded calls of whichever attempt runs in this context."""

    __slots__ = ()

    def call(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call ``fn(*args, **kwargs)`` as the recorded call ``name`` (see
        :meth:`AttemptIO.call`); outside a recording run it is a plain call."""
        io = target()
        if io is None:
            return fn(*args, **kwargs)
        return io.call(name, fn, *args, **kwargs)


io = RecordedCalls()
"""The one :class:`RecordedCalls` object (what ``inputs["io"]`` holds)."""

P = ParamSpec("P")
R = TypeVar("R")


def recorded(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function whose every call is a recorded call named ``name``.

    Example::

        @harness_tui.recorded("clock")
        def now() -> float:
            return time.time()
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            result: R = io.call(name, fn, *args, **kwargs)
            return result

        return wrapper

    return decorate
