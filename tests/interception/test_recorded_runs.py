"""Runs that record what a loopback model server answered, re-run offline with it stopped."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import requests

from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import Run, TaskOrchestrator
from harness_tui.engine.recorded_calls import CallMode, CallSession, Exchange
from harness_tui.records.runs.settings import RunSettings

from .fake_model import FakeModel

CHAT = "/v1/chat/completions"


def _chat(url: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": content}], **extra}


def _run(graph: TaskGraph, payload: Any, calls: CallSession | None, workers: int = 1) -> Run:
    return TaskOrchestrator(graph, workers=workers).start(payload, calls=calls).run_to_end()


def _again(recordings: dict[tuple[str, int], list[Exchange]]) -> dict[Any, list[Exchange]]:
    """The recordings as an export stores and reads them."""
    return {
        key: [Exchange.from_json(json.loads(json.dumps(e.to_json()))) for e in exchanges]
        for key, exchanges in recordings.items()
    }


def gathered(inputs: Any) -> list[str]:
    import asyncio

    url = inputs["payload"]["url"]

    async def ask() -> list[str]:
        async with httpx.AsyncClient() as client:
            answers = await asyncio.gather(
                *(client.post(url + CHAT, json=_chat(url, f"q{i}")) for i in range(6))
            )
        return [a.json()["choices"][0]["message"]["content"] for a in answers]

    return asyncio.run(ask())


def pooled(inputs: Any) -> list[str]:
    from concurrent.futures import ThreadPoolExecutor

    url = inputs["payload"]["url"]

    def one(i: int) -> str:
        reply = requests.post(url + CHAT, json=_chat(url, f"p{i}"), timeout=5)
        return str(reply.json()["choices"][0]["message"]["content"])

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, range(8)))


def streamed(inputs: Any) -> list[str]:
    url = inputs["payload"]["url"]
    answers = []
    for _ in range(2):  # the same request twice: each gets its own answer again
        with httpx.stream("POST", url + CHAT, json=_chat(url, "s", stream=True)) as reply:
            answers.append("".join(reply.iter_text()))
    return answers


def test_gather_pools_and_streams_replay_offline_byte_for_byte(fake_model: FakeModel) -> None:
    graph = TaskGraph()
    for fn in (gathered, pooled, streamed):
        graph.add_task(TaskNode(fn.__name__, fn))
    payload = {"url": fake_model.url}
    session = CallSession(CallMode.LIVE)
    live = _run(graph, payload, session)
    assert live.status.value == "succeeded"
    recorded = session.recordings()
    assert len(recorded[("gathered", 1)]) == 6 and len(recorded[("pooled", 1)]) == 8
    fake_model.stop()
    offline = CallSession(CallMode.OFFLINE, _again(recorded), record=False)
    again = _run(graph, payload, offline, workers=3)
    assert offline.divergences() == []
    assert again.results == live.results
    assert again.digests() == live.digests()
    first, second = live.results["streamed"]
    assert first != second


def flaky(inputs: Any) -> str:
    reply = httpx.post(inputs["payload"]["url"] + CHAT, json={"model": "flaky-500"})
    reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"])


def slow(inputs: Any) -> str:
    timeout = 0.2 if inputs["task"]["attempt"] == 1 else 10.0
    reply = httpx.post(inputs["payload"]["url"] + CHAT, json={"model": "slow"}, timeout=timeout)
    return str(reply.json()["choices"][0]["message"]["content"])


def test_retries_replay_their_own_answers(fake_model: FakeModel) -> None:
    fake_model.server.slow_seconds = 0.5
    graph = TaskGraph()
    graph.add_task(TaskNode("flaky", flaky, max_retries=1))
    graph.add_task(TaskNode("slow", slow, max_retries=1))
    payload = {"url": fake_model.url}
    session = CallSession(CallMode.LIVE)
    live = _run(graph, payload, session)
    statuses = sorted(
        (e.task, e.attempt, e.status.value) for e in live.events if e.status.value != "running"
    )
    assert statuses == [("flaky", 1, "failed"), ("flaky", 2, "succeeded"),
                        ("slow", 1, "failed"), ("slow", 2, "succeeded")]  # fmt: skip
    recorded = session.recordings()
    assert recorded[("flaky", 1)][0].status == 500
    assert recorded[("slow", 1)][0].error is not None
    assert recorded[("slow", 1)][0].error["type"] == "ReadTimeout"
    fake_model.stop()
    offline = CallSession(CallMode.OFFLINE, _again(recorded), record=False)
    again = _run(graph, payload, offline)
    assert again.digests() == live.digests()
    assert again.canonical_trace() == live.canonical_trace()


def swallowing(inputs: Any) -> str:
    try:
        httpx.post(inputs["payload"]["url"] + CHAT, json=_chat("", inputs["payload"]["prompt"]))
    except Exception:
        return "carried on"
    return "asked"


def test_an_unmatched_request_fails_the_attempt_even_when_swallowed(fake_model: FakeModel) -> None:
    graph = TaskGraph()
    graph.add_task(TaskNode("ask", swallowing))
    session = CallSession(CallMode.LIVE)
    _run(graph, {"url": fake_model.url, "prompt": "hello"}, session)
    served = len(fake_model.requests)
    offline = CallSession(CallMode.OFFLINE, _again(session.recordings()), record=False)
    again = _run(graph, {"url": fake_model.url, "prompt": "bye"}, offline)
    assert len(fake_model.requests) == served  # nothing was sent
    error = again.events[-1].error
    assert again.status.value == "failed" and error is not None
    assert error["type"] == "CallDiverged"
    assert "task 'ask'" in error["message"] and f"POST {fake_model.url}{CHAT}" in error["message"]
    assert "$.messages[0].content changed" in error["message"]


def raw_socket(inputs: Any) -> str:
    sock = socket.socket()
    try:
        sock.connect(("127.0.0.1", inputs["payload"]["port"]))
    except OSError:
        return "refused, carried on"
    finally:
        sock.close()
    return "connected"


def test_the_offline_guard_refuses_sockets_of_the_attempt_only(fake_model: FakeModel) -> None:
    graph = TaskGraph()
    graph.add_task(TaskNode("raw", raw_socket))
    port = int(fake_model.url.rsplit(":", 1)[1])
    offline = CallSession(CallMode.OFFLINE, {}, record=False)
    again = _run(graph, {"port": port}, offline)
    error = again.events[-1].error
    assert error is not None and error["type"] == "CallDiverged"
    assert f"connect to 127.0.0.1:{port} refused" in error["message"]
    # Outside the attempt the same connection goes through.
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


def test_a_socket_opened_before_the_run_cannot_send_offline(fake_model: FakeModel) -> None:
    port = int(fake_model.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:

        def send(inputs: Any) -> str:
            try:
                sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
            except OSError:
                return "refused"
            return "sent"

        graph = TaskGraph()
        graph.add_task(TaskNode("send", send))
        offline = CallSession(CallMode.OFFLINE, {}, record=False)
        again = _run(graph, {}, offline)
        error = again.events[-1].error
        assert error is not None and "a send to 127.0.0.1" in error["message"]
    finally:
        sock.close()


def test_secret_headers_are_never_recorded(fake_model: FakeModel) -> None:
    def ask(inputs: Any) -> int:
        headers = {"Authorization": "Bearer sk-live", "X-Api-Key": "k-1", "X-Custom": "visible"}
        reply = requests.post(fake_model.url + CHAT, json=_chat("", "x"), headers=headers)
        return reply.status_code

    graph = TaskGraph()
    graph.add_task(TaskNode("ask", ask))
    session = CallSession(CallMode.LIVE, secret_headers=["x-custom"])
    _run(graph, {}, session)
    (exchange,) = session.recordings()[("ask", 1)]
    names = {n.lower() for n, _ in exchange.request_headers + exchange.response_headers}
    assert names.isdisjoint({"authorization", "x-api-key", "set-cookie", "x-custom"})
    assert "content-type" in names
    text = json.dumps(exchange.to_json())
    assert "sk-live" not in text and "server-secret" not in text and "visible" not in text


async def asking_async(inputs: Any) -> str:
    url = inputs["payload"]["url"]
    async with httpx.AsyncClient() as client:
        reply = await client.post(url + CHAT, json=_chat(url, "async"))
    return str(reply.json()["choices"][0]["message"]["content"])


def test_an_async_task_on_the_harness_loop_is_recorded_and_replayed(fake_model: FakeModel) -> None:
    graph = TaskGraph()
    graph.add_task(TaskNode("asking_async", asking_async))
    session = CallSession(CallMode.LIVE)
    live = _run(graph, {"url": fake_model.url}, session)
    assert len(session.recordings()[("asking_async", 1)]) == 1
    fake_model.stop()
    offline = CallSession(CallMode.OFFLINE, _again(session.recordings()), record=False)
    assert _run(graph, {"url": fake_model.url}, offline).results == live.results


def test_name_resolution_is_refused_offline() -> None:
    def resolve(inputs: Any) -> str:
        try:
            socket.getaddrinfo("localhost", 80)
        except OSError:
            return "refused"
        return "resolved"

    graph = TaskGraph()
    graph.add_task(TaskNode("resolve", resolve))
    again = _run(graph, {}, CallSession(CallMode.OFFLINE, {}, record=False))
    error = again.events[-1].error
    assert error is not None and "resolving localhost refused" in error["message"]


def test_a_task_in_a_child_process_has_io_for_plain_calls(tmp_path: Any) -> None:
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.workflow.loader import load_workflow

    (tmp_path / "io_child_tasks.py").write_text(
        "def ask(inputs):\n    return inputs['io'].call('answer', lambda: 42)\n", encoding="utf-8"
    )
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: child\ntasks:\n  ask: {run: 'io_child_tasks:ask'}\n", encoding="utf-8")
    workflow = load_workflow(flow)
    live = LiveRun.start(workflow, {}, RunSettings(isolation="process"))
    live.drive()
    assert live.run.results == {"ask": 42}
