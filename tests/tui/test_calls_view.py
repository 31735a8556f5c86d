"""The calls view on a recorded agent run, its model server stopped: the inspector lists an
attempt's calls, ``C`` reads them (a streamed answer as one message), ``F`` re-runs offline by
default (fill and live a key away) and a changed prompt fails with the field diff."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Label, RadioButton, Static, TextArea

from harness_tui.engine.exchanges import Exchange
from harness_tui.engine.recorded_calls import CallMode
from harness_tui.records.export import RunRecord
from harness_tui.records.export.writing import checksum
from harness_tui.tui.app import HarnessApp
from harness_tui.tui.glyphs import ASCII
from harness_tui.tui.inspection import CallsShown
from harness_tui.tui.modals.rerun import RerunModal
from harness_tui.tui.modals.traceback import TracebackModal
from harness_tui.tui.preferences import Preferences
from harness_tui.tui.screens.calls import CallList, CallsModal
from harness_tui.tui.widgets.inspector import Inspector
from harness_tui.tui.widgets.run_header import RunHeader

from .agent_run import LABEL, PROMPT, REPLY, AgentRun, recorded_agent_run
from .conftest import make_app, settle, workbench

SIZE = (120, 40)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentRun]:
    """One recorded run for the module (each test that changes the prompt puts it back)."""
    run = recorded_agent_run(tmp_path_factory.mktemp("agent"))
    yield run


def _sections(app: HarnessApp) -> dict[str, Any]:
    inspector = app.screen.query_one(Inspector)
    assert inspector._shown is not None
    return dict(inspector._shown[1])


async def _replayed(pilot: Any, task: str) -> None:
    await pilot.press("c")
    await settle(pilot)
    workbench(pilot.app).panes.select(task)
    await pilot.pause()


def _detail(app: HarnessApp) -> str:
    text = app.screen.query_one("#calls-text", Static).render()
    return str(getattr(text, "plain", text))


async def test_the_inspector_lists_the_calls_and_C_reads_a_streamed_answer_as_one_message(
    agent: AgentRun,
) -> None:
    app = make_app(agent.export, replay=True)
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot, "reply")
        calls = _sections(app)["calls"]
        assert isinstance(calls, CallsShown)
        assert (calls.task, calls.attempt, calls.count) == ("reply", 1, 1)
        ((seq, line),) = calls.lines
        assert seq == 0 and line.startswith("#1 POST http://127.0.0.1:")  # from 1, as --set-answer
        assert "/v1/chat/completions · 200 · " in line and line.endswith(" ms")
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, CallsModal)
        table = app.screen.query_one(CallList)
        assert table.row_count == 1 and table.cell_text(0, "status") == "200"
        detail = _detail(app)
        assert f"\nassistant: {REPLY}\n" in detail  # every chunk, one message
        assert "events assembled into one message" in detail
        assert "user: Draft a reply for a ticket labelled outage" in detail
        assert "system: You triage support tickets. Be brief." in detail
        await pilot.press("escape")
        await pilot.pause()
        # Enter on a listed call opens it there, even when the plan has another task selected
        # (the inspector shows the trace event chosen).
        workbench(app).panes.selected = "classify"
        inspector = app.screen.query_one(Inspector)
        inspector.focus()
        (section,) = [n for n in inspector.root.children if n.id in inspector._calls_nodes]
        inspector.move_cursor(section.children[0])
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CallsModal) and app.screen.shown is not None
        assert app.screen.shown.seq == 0 and app.screen.task_name == "reply"
        await pilot.press("escape")
        await pilot.pause()
        workbench(app).panes.select("classify")
        await pilot.press("C")
        await pilot.pause()
        assert f"\nassistant: {LABEL}\n" in _detail(app)  # a plain JSON answer


async def test_F_offline_by_default_reproduces_the_outputs_with_the_server_stopped(
    agent: AgentRun,
) -> None:
    app = make_app(agent.export, replay=True)
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot, "classify")
        await pilot.press("F")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, RerunModal) and modal.mode is CallMode.OFFLINE
        assert modal.query_one("#rerun-offline", RadioButton).value  # the toggle shows it
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        session = workbench(app).session
        assert session is not None and session.answering is CallMode.OFFLINE
        assert " OFFLINE " in app.screen.query_one(RunHeader).render().plain
        assert session.run.results == agent.results
        # The re-run's calls were answered from the recording, and the view reads them.
        (answered,) = session.exchanges("reply", 1)
        assert answered.body == RunRecord.read(agent.export).recordings[("reply", 1)][0].body


async def test_the_toggle_picks_fill_or_live(agent: AgentRun) -> None:
    app = make_app(agent.export, replay=True)
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot, "reply")
        await pilot.press("F")
        await pilot.pause()
        await pilot.press("l")
        assert app.screen.query_one("#rerun-live", RadioButton).value
        await pilot.press("i")
        await pilot.pause()
        assert app.screen.query_one("#rerun-fill", RadioButton).value
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        session = workbench(app).session
        assert session is not None and session.answering is CallMode.FILL
        assert session.run.results == agent.results  # everything it asks was recorded
        assert " FILL " in app.screen.query_one(RunHeader).render().plain


async def test_a_changed_prompt_fails_offline_with_the_field_diff(agent: AgentRun) -> None:
    agent.prompt.write_text("Classify this ticket: {ticket}", encoding="utf-8")
    try:
        app = make_app(agent.export, replay=True)
        async with app.run_test(size=SIZE) as pilot:
            await _replayed(pilot, "classify")
            await pilot.press("F")
            await pilot.pause()
            await pilot.press("y")
            await settle(pilot)
            await pilot.press("c")
            await settle(pilot)
            workbench(app).panes.select("classify")
            await pilot.pause()
            sections = _sections(app)
            assert sections["error"]["type"] == "CallDiverged"
            assert "$.messages[1].content changed" in sections["error"]["message"]
            (change,) = sections["divergence"]
            ticket = "The dashboard shows error 500"
            assert change == {
                "field": "$.messages[1].content",
                "change": "changed",
                "recorded": PROMPT.format(ticket=ticket),
                "sent": f"Classify this ticket: {ticket}",
            }
            await pilot.press("t")
            await pilot.pause()
            assert isinstance(app.screen, TracebackModal)
            text = app.screen.query_one(TextArea).text
            assert f'- recorded: "Label this ticket in one word: {ticket}"' in text
            assert f'+ sent:     "Classify this ticket: {ticket}"' in text
    finally:
        agent.prompt.write_text(PROMPT, encoding="utf-8")


async def test_a_damaged_recording_is_said_never_shown_as_no_calls(
    agent: AgentRun, tmp_path: Path
) -> None:
    record = RunRecord.read(agent.export)
    attempt = next(a for a in record.document["attempts"] if a.get("io"))
    attempt["io"][0]["seq"] = "first"
    record.document["checksum"] = checksum(record.document)
    damaged = record.write(tmp_path / "damaged.json")
    app = make_app(damaged, replay=True)
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot, attempt["task"])
        assert "calls" not in _sections(app)
        await pilot.press("C")
        await pilot.pause()
        assert not isinstance(app.screen, CallsModal)
        said = [n.message for n in app._notifications]
        assert any("io[0].seq: expected a number from 0" in line for line in said)
        await pilot.press("F")
        await pilot.pause()
        assert not isinstance(app.screen, RerunModal)  # nothing to answer from: it says so
        assert "cannot be read" in str(app.screen.query_one(Label).render())


def _many(count: int) -> list[Exchange]:
    body = b'{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}'
    url = "http://127.0.0.1:1/v1/"
    return [
        Exchange(i, "http", "POST", f"{url}{i}", (), b"{}", 200, (), (body,), duration=0.01)
        for i in range(count)
    ]


async def test_the_calls_view_in_ascii_draws_none_of_its_glyphs() -> None:
    request = {"messages": [{"role": "user", "content": "key <redacted>"}]}
    answer = {"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"function": {"name": "lookup", "arguments": "{}"}}]}}]}  # fmt: skip
    body, answered = json.dumps(request).encode(), json.dumps(answer).encode()
    exchange = Exchange(0, "http", "POST", "http://127.0.0.1:1/v1", (), body, 200, (), (answered,))
    drawn = {}
    for glyphs in ("unicode", "ascii"):
        app = make_app(None, preferences=Preferences(glyphs=glyphs))
        async with app.run_test(size=(80, 24)) as pilot:
            await app.push_screen(CallsModal("ask", 1, 1, lambda _: [exchange]))
            await pilot.pause()
            drawn[glyphs] = set(app.export_screenshot())
    ours = {"‹", "›", "→", "↑", "↓", "·"}
    assert ours <= drawn["unicode"]  # drawn in the ordinary look: the check below can fail
    assert not (ours | {chr(code) for code in ASCII}) & drawn["ascii"]


async def test_a_thousand_calls_open_drawing_only_the_rows_in_view(tmp_path: Path) -> None:
    exchanges = _many(1_000)
    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(CallsModal("ask", 1, 1, lambda _: exchanges))
        await pilot.pause()
        table = app.screen.query_one(CallList)
        assert table.row_count == 1_000
        assert 0 < len(table._rows) < 30  # the rows on screen, not a thousand
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 999 and "#1000 POST" in _detail(app)
        assert len(table._rows) < 60


def _hostile_exchanges() -> list[Exchange]:
    """Exchanges whose every field is hostile: escapes and markup in names, URLs, headers and
    bodies; invalid UTF-8; a gzip bomb labelled deflate; a broken stream; deep nesting."""
    from tests.hostile.corpus import HOSTILE

    h, url = HOSTILE, f"http://127.0.0.1:1/{HOSTILE}"
    chat = {
        "model": h,
        "tools": [{"name": h}],
        "messages": [
            {"role": h, "content": [{"type": "tool_result", "tool_use_id": h, "content": h}]}
        ],
    }
    answer = {
        "usage": {h: h},
        "choices": [
            {
                "finish_reason": h,
                "message": {
                    "role": h,
                    "content": h,
                    "tool_calls": [{"function": {"name": h, "arguments": h}}],
                },
            }
        ],
    }
    stream = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in [
        {"choices": [{"index": 0, "delta": {"role": h, "content": h}}]},
        {"choices": [{"index": 0, "finish_reason": h, "delta": {"tool_calls": [
            {"index": 0, "function": {"name": h, "arguments": h}}]}}]},
    ]) + b"data: {broken\n\n\xff\xfe"  # fmt: skip
    bomb = gzip.compress(b"\x1b[2J" * (1 << 20))
    deep = '[{"type":"tool_result","content":' * 400 + '"x"' + "}]" * 400
    headers = tuple((f"{h}{i}", h * 3) for i in range(250))
    error = {"type": h, "message": h}
    return [
        Exchange(0, "http", h, url, headers, json.dumps(chat).encode(), 200, headers,
                 (json.dumps(answer).encode(),), duration=0.01),
        Exchange(1, "http", "POST", url, (), b"{}", 200, (("content-type", "text/event-stream"),),
                 (stream,)),
        Exchange(2, "http", "POST", url, (), b"\xff\xfe" + h.encode(), 500,
                 (("content-encoding", "deflate"),), (bomb,), error=error),
        Exchange(3, "http", "POST", url, (), f'{{"messages":[{{"content":{deep}}}]}}'.encode(),
                 error={"type": "ReadTimeout", "message": h}),
        Exchange(4, "call", h, h, (), json.dumps([h]).encode(), value={h: [h]}),
        Exchange(5, "call", h, h, (), b"\xff" + h.encode(), error=error),
        Exchange(6, "http", "GET", url, (), None, 200, (("content-type", h),),
                 (b'{"a": ' * 2000 + b"1" + b"}" * 2000,)),
    ]  # fmt: skip


@pytest.mark.slow  # about 6 s of drawing; the caps it meets have fast tests in test_call_text.py
async def test_hostile_exchanges_read_inert_and_the_view_keeps_working() -> None:
    from tests.hostile.corpus import HOSTILE, OBEYED

    exchanges = _hostile_exchanges()
    app = make_app(None)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(CallsModal(HOSTILE, 2, 1, lambda _: exchanges))
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, CallsModal)
        title = str(modal.query_one("#calls-title", Label).render())
        assert HOSTILE not in title and not OBEYED.search(title)
        for row in range(len(exchanges)):
            detail = _detail(app)
            assert not OBEYED.search(detail) and "[link=" in detail, row  # shown, not obeyed
            assert len(detail) < 2_000_000, row  # headers and bodies bounded
            for column in ("seq", "method", "target", "status", "size", "time"):
                assert not OBEYED.search(modal.query_one(CallList).cell_text(row, column))
            await pilot.press("y", "down")
            await pilot.pause()
        await pilot.press("]", "tab", "end", "tab")
        await pilot.pause()
        assert app.screen is modal and modal.shown is not None
