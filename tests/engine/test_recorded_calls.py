"""Recorded calls (``inputs["io"].call``, ``@recorded``) through the orchestrator: recorded
per attempt, answered offline, outside every digest, attributed across threads."""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

import pytest

from harness_tui import recorded
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import Run, TaskOrchestrator
from harness_tui.engine.recorded_calls import (
    CallDiverged,
    CallMode,
    CallSession,
    Exchange,
    current,
    io,
)

counter = itertools.count()


def draw() -> int:
    return next(counter)


@recorded("tick")
def tick(step: int) -> int:
    return next(counter) * step


def drawing(inputs: Any) -> list[int]:
    return [inputs["io"].call("draw", draw), tick(10), inputs["io"].call("draw", draw)]


def failing(inputs: Any) -> str:
    def broken() -> None:
        raise LookupError("no such row")

    try:
        inputs["io"].call("db", broken)
    except LookupError as exc:
        return f"caught {type(exc).__name__}: {exc}"
    return "no error"


def _graph(*fns: Any) -> TaskGraph:
    graph = TaskGraph()
    for fn in fns:
        graph.add_task(TaskNode(fn.__name__, fn))
    return graph


def _run(graph: TaskGraph, calls: CallSession | None) -> Run:
    return TaskOrchestrator(graph).start({}, calls=calls).run_to_end()


def test_calls_are_recorded_and_answered_offline() -> None:
    graph = _graph(drawing, failing)
    session = CallSession(CallMode.LIVE)
    live = _run(graph, session)
    recorded_calls = session.recordings()
    assert [(e.seq, e.url) for e in recorded_calls[("drawing", 1)]] == [
        (0, "draw"), (1, "tick"), (2, "draw"),
    ]  # fmt: skip
    assert recorded_calls[("failing", 1)][0].error == {
        "type": "LookupError", "message": "no such row", "module": "builtins",
    }  # fmt: skip
    offline = CallSession(CallMode.OFFLINE, recorded_calls, record=False)
    again = _run(graph, offline)
    assert again.results == live.results
    assert again.results["failing"] == "caught LookupError: no such row"  # the real class
    assert again.digests() == live.digests()


def test_a_recorded_and_an_unrecorded_run_have_the_same_digests() -> None:
    def steady(inputs: Any) -> int:
        return int(inputs["io"].call("answer", lambda: 42))

    graph = _graph(steady)
    assert _run(graph, CallSession()).digests() == _run(graph, None).digests()


def test_fill_answers_what_was_recorded_and_calls_the_rest() -> None:
    graph = _graph(drawing)
    session = CallSession(CallMode.LIVE)
    live = _run(graph, session)
    partial = {("drawing", 1): session.recordings()[("drawing", 1)][:1]}
    fill = CallSession(CallMode.FILL, partial)
    again = _run(graph, fill)
    assert again.results["drawing"][0] == live.results["drawing"][0]
    assert again.results["drawing"][2] != live.results["drawing"][2]
    assert len(fill.recordings()[("drawing", 1)]) == 3  # what it filled in is recorded


def test_an_unrecorded_call_offline_fails_the_attempt_with_one_line() -> None:
    def asking(inputs: Any) -> str:
        try:
            inputs["io"].call("lookup", lambda key: key, "new-key")
        except ConnectionError:
            return "swallowed"
        return "answered"

    graph = _graph(asking)
    session = CallSession(CallMode.LIVE)
    recorded_run = _run(graph, session)
    assert recorded_run.results == {"asking": "answered"}
    old = session.recordings()[("asking", 1)][0]
    changed = {("asking", 1): [Exchange(0, "call", "CALL", "lookup", (), b'{"args":["old-key"],'
                                        b'"kwargs":{}}', value="old-key")]}  # fmt: skip
    assert old.request_body == b'{"args":["new-key"],"kwargs":{}}'
    offline = CallSession(CallMode.OFFLINE, changed, record=False)
    again = _run(graph, offline)
    (line,) = offline.divergences()
    assert line == (
        "task 'asking' attempt 1: call 'lookup' was not recorded; nearest recorded call "
        "'lookup': $.args[0] changed"
    )
    assert again.status.value == "failed"
    assert again.events[-1].error == {"type": "CallDiverged", "message": line}
    # Beside the line, the request and the nearest recorded one, for a diff with values.
    mismatch = again.call_mismatch("asking", 1)
    assert mismatch is not None
    (change,) = mismatch.changes()
    assert (change.path, change.recorded, change.sent) == ("$.args[0]", "old-key", "new-key")
    assert recorded_run.call_mismatch("asking", 1) is None


def test_a_mismatch_travels_with_its_attempts_report() -> None:
    recorded = {("t", 1): [Exchange(0, "call", "CALL", "f", (), b'{"args":[1],"kwargs":{}}')]}
    there = CallSession(CallMode.OFFLINE, recorded, record=False).open("t", 1)
    with pytest.raises(CallDiverged):
        there.begin("call", "CALL", "f", (), b'{"args":[2],"kwargs":{}}')
    here = CallSession(CallMode.OFFLINE, recorded, record=False)
    here.open("t", 1).absorb(json.loads(json.dumps(there.report())))  # as a child sends it
    mismatch = here.mismatch("t", 1)
    assert mismatch is not None and mismatch == there.mismatch
    assert [(c.path, c.recorded, c.sent) for c in mismatch.changes()] == [("$.args[0]", 1, 2)]


def test_each_exchange_says_how_long_it_took_on_the_sessions_clock() -> None:
    clock = FakeClock(start=0.0, tick=0.5)  # each reading half a second after the last
    graph = _graph(drawing)
    session = CallSession(CallMode.LIVE, clock=clock)
    _run(graph, session)
    assert [e.duration for e in session.recordings()[("drawing", 1)]] == [0.5, 0.5, 0.5]
    offline = CallSession(CallMode.OFFLINE, session.recordings(), clock=FakeClock(tick=9.0))
    _run(graph, offline)  # an answer from the recording took what the recorded one took
    assert [e.duration for e in offline.recordings()[("drawing", 1)]] == [0.5, 0.5, 0.5]


def test_threads_started_by_an_attempt_belong_to_it_and_outside_threads_are_unattributed() -> None:
    outside_done = threading.Event()
    go = threading.Event()

    def outside() -> None:
        go.wait(10)
        io.call("outside", lambda: 1)
        outside_done.set()

    def threaded(inputs: Any) -> int:
        results: list[int] = []
        worker = threading.Thread(target=lambda: results.append(io.call("inner", lambda: 7)))
        worker.start()
        worker.join()
        go.set()
        outside_done.wait(10)
        return results[0]

    early = threading.Thread(target=outside)  # started before the run: outside any attempt
    early.start()
    session = CallSession(CallMode.LIVE)
    _run(_graph(threaded), session)
    early.join()
    found = session.recordings()
    assert [e.url for e in found[("threaded", 1)]] == ["inner"]
    assert [e.url for e in found[("", 0)]] == ["outside"]


def test_a_call_returning_what_is_not_json_fails_and_is_kept_as_an_error() -> None:
    session = CallSession(CallMode.LIVE)
    attempt = session.open("t", 1)
    token = current.set(attempt)
    try:
        with pytest.raises(ValueError):
            io.call("bad", lambda: {1, 2})
    finally:
        current.reset(token)
    (exchange,) = attempt.exchanges
    assert exchange.error is not None and exchange.error["type"] == "CanonicalError"


def test_exchanges_survive_their_json_form() -> None:
    exchange = Exchange(
        3, "http", "POST", "http://127.0.0.1:1/x", (("a", "b"),), b"\xff\x00",
        200, (("content-encoding", "gzip"),), (b"\x1f\x8b", b"text"), None,
        {"type": "ReadTimeout", "message": "late", "module": "httpx"}, 0.25,
    )  # fmt: skip
    assert Exchange.from_json(exchange.to_json()) == exchange
    assert exchange.to_json()["duration_s"] == 0.25
    with pytest.raises(ValueError, match=r"io\.duration_s"):
        Exchange.from_json({**exchange.to_json(), "duration_s": "slow"})
    # Before: an integer past a float's range was an OverflowError (the workbench's calls
    # view crashed on the export), and infinity read as a duration.
    for endless in (10**500, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"io\.duration_s"):
            Exchange.from_json({**exchange.to_json(), "duration_s": endless})
    with pytest.raises(ValueError, match=r"io\.seq"):
        Exchange.from_json({**exchange.to_json(), "seq": -1})
    with pytest.raises(ValueError, match="base64"):
        Exchange.from_json({**exchange.to_json(), "chunks": [{"base64": "%%"}]})


def test_a_finished_run_keeps_no_requests_of_outside_threads() -> None:
    session = CallSession(CallMode.LIVE)
    _run(_graph(drawing), session)
    assert io.call("after", lambda: 1) == 1
    assert ("", 0) not in session.recordings()
