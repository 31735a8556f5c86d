"""How a recorded exchange reads in the calls view: conversations, streams assembled, errors
and timeouts named, redacted values shown as removed, hostile text inert."""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

import pytest

from harness_tui.engine.exchanges import Exchange
from harness_tui.tui.call_text import (
    MAX_DECODED,
    MAX_HEADERS,
    MAX_READ,
    call_row,
    diff_text,
    exchange_text,
    response_bytes,
    summary_line,
)
from harness_tui.workflow.limits import LINE_CHARS

URL = "http://127.0.0.1:1/v1/chat/completions"
JSON = (("content-type", "application/json"),)
SSE = (("content-type", "text/event-stream"),)


def _http(request: Any, answer: bytes | list[bytes] = b"", **kwargs: Any) -> Exchange:
    body = json.dumps(request).encode() if not isinstance(request, bytes) else request
    chunks = tuple(answer) if isinstance(answer, list) else (answer,)
    kwargs.setdefault("status", 200)
    return Exchange(0, "http", "POST", URL, JSON, body, chunks=chunks, **kwargs)


def _events(*chunks: Any) -> list[bytes]:
    return [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def _plain(exchange: Exchange) -> str:
    return exchange_text(exchange).plain


def test_an_openai_stream_with_a_tool_call_reads_as_one_message() -> None:
    chunks = _events(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me "}}]},
        {"choices": [{"index": 0, "delta": {"content": "look."}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"name": "lookup", "arguments": '{"id"'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": ": 42}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    )  # fmt: skip
    request = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    text = _plain(_http(request, chunks, response_headers=SSE))
    assert "(streamed: 6 events assembled into one message)" in text
    assert "assistant: Let me look.\n" in text
    assert '→ tool call lookup({"id": 42})' in text
    assert "finish: tool_calls" in text
    assert 'model: "m" · stream: true' in text and "user: hi" in text


def test_a_stream_of_tool_calls_only_starts_with_the_first_call() -> None:
    chunks = _events(
        {"choices": [{"delta": {"role": "assistant", "content": "", "tool_calls": [
            {"index": 0, "function": {"name": "a", "arguments": "{}"}}]}}]},
        {"choices": [{"delta": {"tool_calls": [
            {"index": 1, "function": {"name": "b", "arguments": "[1]"}}]}}]},
    )  # fmt: skip
    text = _plain(_http({"messages": []}, chunks, response_headers=SSE))
    assert "assistant: → tool call a({})\n           → tool call b([1])\n" in text


def test_an_anthropic_stream_reads_as_one_message_without_a_content_type() -> None:
    chunks = _events(
        {"type": "message_start", "message": {"role": "assistant"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        {"type": "content_block_delta", "index": 0, "delta": {"text": "Hel"}},
        {"type": "content_block_delta", "index": 0, "delta": {"text": "lo"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
    )
    text = _plain(_http({"messages": [], "system": "be kind"}, chunks))
    assert "assistant: Hello\n" in text and "finish: end_turn" in text
    assert "system: be kind" in text


def test_a_conversation_with_tool_results_and_content_blocks() -> None:
    request = {"model": "m", "tools": [{"type": "function", "function": {"name": "lookup"}}],
               "messages": [
                   {"role": "user", "content": [{"type": "text", "text": "find 42"},
                                                {"type": "image_url"}]},
                   {"role": "assistant", "content": None, "tool_calls": [
                       {"id": "c1", "function": {"name": "lookup", "arguments": "{\"id\":42}"}}]},
                   {"role": "tool", "tool_call_id": "c1", "content": "{\"name\": \"Ann\"}"},
               ]}  # fmt: skip
    answer = {"choices": [{"message": {"role": "assistant", "content": "It is Ann."},
                           "finish_reason": "stop"}], "usage": {"total_tokens": 9}}  # fmt: skip
    text = _plain(_http(request, json.dumps(answer).encode()))
    assert "tools offered: lookup" in text
    assert "user: find 42\n      [image_url]" in text
    assert 'assistant: → tool call lookup({"id": 42})' in text
    assert 'tool (c1): {"name": "Ann"}' in text
    assert "assistant: It is Ann." in text and 'usage: {"total_tokens": 9}' in text


def test_json_that_is_not_chat_is_pretty_printed_and_gzip_is_decoded() -> None:
    answer = gzip.compress(json.dumps({"rows": [1, 2]}).encode())
    gzipped = (("content-encoding", "gzip"), *JSON)
    text = _plain(_http({"query": "q"}, answer, response_headers=gzipped))
    assert '{\n  "query": "q"\n}' in text
    assert '(decoded from gzip)\n{\n  "rows": [\n    1,\n    2\n  ]\n}' in text


def test_a_gzip_bomb_is_decoded_only_so_far() -> None:
    bomb = gzip.compress(b"a" * (MAX_DECODED * 2))
    exchange = _http({}, bomb, response_headers=(("content-encoding", "gzip"),))
    data, note = response_bytes(exchange)
    assert len(data) == MAX_DECODED and "the first" in note


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    "pack", [gzip.compress, _raw_deflate, zlib.compress], ids=["gzip", "raw", "zlib"]
)
def test_a_bomb_labelled_deflate_is_decoded_only_so_far_whatever_its_wrapping(
    pack: Any,
) -> None:
    # Before: a gzip body labelled deflate was decoded whole by gzip.decompress (a 300 kB
    # answer took 300 MB), then cut; a raw deflate one was not decoded at all.
    bomb = pack(b"a" * (MAX_DECODED * 2))
    exchange = _http({}, bomb, response_headers=(("content-encoding", "deflate"),))
    data, note = response_bytes(exchange)
    assert data == b"a" * MAX_DECODED and note.startswith("(decoded from deflate: the first")


def test_a_body_past_the_read_cap_is_text_not_parsed() -> None:
    answer = json.dumps({"choices": [{"message": {"role": "assistant", "content": "x"}}],
                         "pad": "p" * MAX_READ}).encode()  # fmt: skip
    text = _plain(_http({"messages": []}, answer, response_headers=JSON))
    assert "shown as text, not read as JSON or a stream" in text
    assert "assistant: x" not in text and '{"choices"' in text


def test_headers_are_listed_up_to_a_cap_each_on_one_cut_line() -> None:
    headers = tuple((f"h{i}", "v" * (LINE_CHARS * 3)) for i in range(MAX_HEADERS + 50))
    text = _plain(_http({}, b"{}", response_headers=headers))
    assert "(50 more headers)" in text and f"h{MAX_HEADERS - 1}: " in text
    assert f"h{MAX_HEADERS}: " not in text
    assert max(len(line) for line in text.splitlines()) < LINE_CHARS + 100


@pytest.mark.parametrize(
    ("error", "status", "said", "row"),
    [
        ({"type": "ReadTimeout", "message": "timed out"}, None,
         "timed out: no answer came: ReadTimeout: timed out", "timed out"),
        ({"type": "ConnectError", "message": "refused"}, None,
         "no answer came: ConnectError: refused", "error"),
        ({"type": "RemoteProtocolError", "message": "peer closed"}, 200,
         "the answer was cut short: RemoteProtocolError: peer closed", "200 cut"),
    ],
)  # fmt: skip
def test_errors_and_timeouts_say_so(
    error: dict[str, str], status: int | None, said: str, row: str
) -> None:
    exchange = _http({"q": 1}, b"partial" if status else b"", status=status, error=error)
    assert said in _plain(exchange)
    assert call_row(exchange).status == row and call_row(exchange).failed


def test_a_server_error_is_a_failed_row_with_its_body() -> None:
    exchange = _http({}, b'{"error": {"message": "try again"}}', status=500)
    assert call_row(exchange).failed and call_row(exchange).status == "500"
    assert '"message": "try again"' in _plain(exchange)


def test_redacted_values_show_as_removed_and_secret_headers_as_never_recorded() -> None:
    request = {"messages": [{"role": "user", "content": "my key is <redacted>"}]}
    text = exchange_text(_http(request, b"{}"))
    assert "user: my key is ‹removed›" in text.plain
    removed = [s for s in text.spans if text.plain[s.start : s.end] == "‹removed›"]
    assert removed and str(removed[0].style) == "reverse"
    assert "secret headers: never recorded" in text.plain


def test_hostile_text_is_inert_everywhere() -> None:
    hostile = "\x1b[2J\x1b]0;owned\x07[red]markup[/]\u202e"
    exchange = Exchange(
        0, "http", hostile, URL + hostile, ((hostile, hostile),),
        json.dumps({"messages": [{"role": hostile, "content": hostile}]}).encode(),
        200, ((hostile, hostile),), (f"data: {hostile}\n\n".encode(),),
    )  # fmt: skip
    text = exchange_text(exchange).plain + summary_line(exchange)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b[2J" in text and "[red]markup[/]" in text and "\\u202e" in text


def test_binary_bodies_and_recorded_calls() -> None:
    binary = _http(b"\xff\x00\x01", b"\x89PNG\xff")
    assert "(5 B of binary data)" in _plain(binary)
    call = Exchange(1, "call", "CALL", "dice", (), b'{"args":[6],"kwargs":{}}', value=[4])
    assert 'arguments\n{\n  "args": [\n    6\n  ]' in _plain(call)
    assert call_row(call).status == "returned"
    raised = Exchange(
        2, "call", "CALL", "db", (), b"{}", error={"type": "KeyError", "message": "x"}
    )
    assert "raised KeyError: x" in _plain(raised) and call_row(raised).status == "raised"


def test_the_field_diff_names_each_field_with_both_values() -> None:
    rows = [{"field": "$.messages[0].content", "change": "changed", "recorded": "a\x1b",
             "sent": "b"}, {"field": "$.seed", "change": "added", "sent": 3}]  # fmt: skip
    assert diff_text(rows) == (
        '$.messages[0].content (changed)\n  - recorded: "a\\u001b"\n  + sent:     "b"\n'
        "$.seed (added)\n  + sent:     3"
    )
