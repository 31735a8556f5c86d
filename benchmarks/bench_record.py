"""Recorded calls: 1,000 chat completions from a loopback fake model server (no added latency,
so the overhead is not hidden behind it), through ``httpx`` and ``requests``.

Per client, each round times 1,000 calls:
- ``plain``: no interception installed (the baseline);
- ``installed``: interception installed, no recording run (a context lookup per request);
- ``recorded``: inside an attempt of a recording session (``live``);
- ``offline``: the same 1,000 calls answered from that recording, the server untouched;
- ``vcrpy``: vcrpy 9 recording the same calls into a cassette (if installed), for comparison.

Prints medians and spreads (min..max) over the rounds, the overhead per call in microseconds
against ``plain``, and each ratio (target for ``recorded``: at most 1.3x), also of the best
rounds (the least disturbed by a busy machine). Then correctness:
two prompts recorded, replayed in the other order, with vcrpy's default matching and ours.

Run: python benchmarks/bench_record.py [--calls 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.interception import fake_model

CHAT = "/v1/chat/completions"


def _body(i: int) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": f"question {i % 50}"}]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    fake_model.LATENCY = 0.0
    server = fake_model.FakeModel()
    try:
        for client in ("httpx", "requests"):
            _bench(client, server.url, args.calls, args.rounds)
        _swapped(server.url)
        _core(args.calls, args.rounds)
    finally:
        server.stop()


def _core(calls: int, rounds: int) -> None:
    """The recorder's own cost per exchange, without the network's noise: numbering, header
    cleaning and keeping (recording), and key, match and copy (offline)."""
    import json

    from harness_tui.engine.recorded_calls import CallMode, CallSession

    headers = [("content-type", "application/json"), ("authorization", "Bearer x")] * 4
    bodies = [json.dumps(_body(i)).encode() for i in range(calls)]
    answer = [b'{"choices": [{"message": {"content": "hello"}}]}']
    kept: list[float] = []
    answered: list[float] = []
    for _ in range(rounds):
        session = CallSession(CallMode.LIVE)
        io = session.open("t", 1)
        start = time.perf_counter()
        for body in bodies:
            io.begin("http", "POST", "http://127.0.0.1:1" + CHAT, headers, body).responded(
                200, headers, answer
            )
        kept.append(time.perf_counter() - start)
        replay = CallSession(CallMode.OFFLINE, session.recordings(), record=False)
        io = replay.open("t", 1)
        start = time.perf_counter()
        for body in bodies:
            io.begin("http", "POST", "http://127.0.0.1:1" + CHAT, headers, body)
        answered.append(time.perf_counter() - start)
    for name, found in (("recording", kept), ("answering", answered)):
        each = [t / calls * 1e6 for t in found]
        print(f"recorder alone, {name}: {statistics.median(each):.1f} us per exchange "
              f"({min(each):.1f}..{max(each):.1f})")  # fmt: skip


def _swapped(url: str) -> None:
    """Record prompts A then B, replay B then A: does each get its own answer?"""
    import httpx

    from harness_tui.engine.recorded_calls import CallMode, CallSession, current
    from harness_tui.interception import install, uninstall

    def ask(prompt: str) -> str:
        reply = httpx.post(url + CHAT, json=_body(0) | {"messages": [{"content": prompt}]})
        return str(reply.json()["choices"][0]["message"]["content"])

    try:
        import vcr
    except ImportError:
        vcr = None
    uninstall()
    if vcr is not None:
        with tempfile.TemporaryDirectory() as folder:
            cassette = str(Path(folder) / "c.yaml")
            with vcr.use_cassette(cassette, record_mode="all"):
                live = {"A": ask("A"), "B": ask("B")}
            with vcr.use_cassette(cassette, record_mode="none", allow_playback_repeats=False):
                again = {"B": ask("B"), "A": ask("A")}
        print(f"vcrpy default matching, other order: {_verdict(live, again)}")
    install()
    session = CallSession(CallMode.LIVE)
    io = session.open("t", 1)
    token = current.set(io)
    live = {"A": ask("A"), "B": ask("B")}
    current.reset(token)
    replay = CallSession(CallMode.OFFLINE, session.recordings(), record=False)
    io = replay.open("t", 1)
    token = current.set(io)
    again = {"B": ask("B"), "A": ask("A")}
    current.reset(token)
    print(f"harness-tui matching, other order: {_verdict(live, again)}")


def _verdict(live: dict[str, str], again: dict[str, str]) -> str:
    if live == again:
        return "each prompt got its own answer"
    if live["A"] == again["B"] and live["B"] == again["A"]:
        return "the two prompts got each other's answers"
    return f"different answers ({live} vs {again})"


def _caller(client: str, url: str) -> tuple[Callable[[int], bytes], Callable[[], None]]:
    if client == "httpx":
        import httpx

        session = httpx.Client()
        return (lambda i: session.post(url + CHAT, json=_body(i)).content), session.close
    import requests

    http = requests.Session()
    return (lambda i: http.post(url + CHAT, json=_body(i)).content), http.close


def _timed(
    client: str, url: str, calls: int, around: Callable[[Callable[[], None]], None]
) -> float:
    call, close = _caller(client, url)
    call(0)  # connect and warm up outside the timing

    def work() -> None:
        for i in range(calls):
            call(i)

    start = time.perf_counter()
    around(work)
    took = time.perf_counter() - start
    close()
    return took


def _bench(client: str, url: str, calls: int, rounds: int) -> None:
    from harness_tui.engine.recorded_calls import CallMode, CallSession, current
    from harness_tui.interception import install, uninstall

    times: dict[str, list[float]] = {}

    def plain(work: Callable[[], None]) -> None:
        work()

    def under(session: CallSession) -> Callable[[Callable[[], None]], None]:
        def run(work: Callable[[], None]) -> None:
            io = session.open("bench", 1)
            token = current.set(io)
            try:
                work()
            finally:
                current.reset(token)
                session.close(io)
                session.finish()

        return run

    try:
        import vcr
    except ImportError:
        vcr = None

    for _ in range(rounds):  # every mode in every round: the machine's load changes
        uninstall()
        times.setdefault("plain", []).append(_timed(client, url, calls, plain))
        if vcr is not None:
            with tempfile.TemporaryDirectory() as folder:
                cassette = str(Path(folder) / "c.yaml")

                def taped(work: Callable[[], None]) -> None:
                    with vcr.use_cassette(cassette, record_mode="all"):
                        work()

                times.setdefault("vcrpy", []).append(_timed(client, url, calls, taped))
        install()
        times.setdefault("installed", []).append(_timed(client, url, calls, plain))
        recording = CallSession(CallMode.LIVE)
        times.setdefault("recorded", []).append(_timed(client, url, calls, under(recording)))
        replay = CallSession(CallMode.OFFLINE, recording.recordings(), record=False)
        times.setdefault("offline", []).append(_timed(client, url, calls, under(replay)))
        assert not replay.divergences(), replay.divergences()
    base = statistics.median(times["plain"])
    fastest = min(times["plain"])
    print(f"{client}: {calls} calls, {rounds} rounds (median, min..max seconds)")
    for name, found in times.items():
        median = statistics.median(found)
        extra = (median - base) / calls * 1e6
        print(f"  {name:9} {median:7.3f} s  ({min(found):.3f}..{max(found):.3f})  "
              f"{extra:+8.1f} us/call  {median / base:5.2f}x plain  "
              f"(best rounds: {min(found) / fastest:5.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
