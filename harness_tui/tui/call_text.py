"""How a recorded exchange reads (docs/recording.md): one row for a list of calls, and the
request and its answer for the calls view.

A JSON body is pretty-printed; a chat body (``messages``, ``choices``, ``content``, tool calls)
reads as a conversation; a streamed answer (server-sent events) is assembled into the one
message its chunks spell; an error or a timeout says so; a value redaction removed is shown as
removed. Every exchange comes from a task, an export or a server: each piece of it goes
through the one sanitiser and into a Rich ``Text``, never parsed as markup.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from ..engine.call_matching import REPLACEMENT, FieldChange, body_json
from ..engine.exchanges import Exchange
from ..engine.untrusted import shorten
from ..workflow.limits import LINE_CHARS
from .chat_bodies import (
    assemble_stream,
    chat_answer,
    content_pieces,
    is_chat_request,
    pretty_json,
    sse_events,
    tool_calls,
    tool_name,
)
from .sanitize import visible

__all__ = ["CallRow", "call_row", "diff_text", "exchange_text", "field_diff", "summary_line"]

MAX_DECODED = 4 << 20
"""At most this many bytes of a compressed answer are decoded to be shown (a gzip bomb)."""

MAX_SHOWN = 200_000
"""At most this many characters of one body are shown; the rest is counted."""

MAX_READ = MAX_DECODED
"""A body longer than this many bytes is shown as text, not read as JSON or a stream: what
the view parses on opening is bounded (a recorded answer may be hundreds of megabytes)."""

MAX_HEADERS = 200
"""At most this many headers of one side are listed (each one line, cut at
:data:`LINE_CHARS`); the rest is counted."""

REMOVED = "‹removed›"
"""What a value redaction replaced reads as."""

STYLES = {
    "title": "bold",
    "section": "bold underline",
    "role": "bold",
    "tool": "italic",
    "dim": "dim",
    "error": "bold red",
    "removed": "reverse",
}


@dataclass(frozen=True, slots=True)
class CallRow:
    """One exchange as a row of a list: every field made visible. ``number`` is its place in
    the attempt's one sequence from 1, as ``rerun --set-answer TASK#ATTEMPT:N`` numbers it."""

    number: int
    method: str
    target: str
    status: str
    size: str
    duration: str
    failed: bool


def size_text(size: int) -> str:
    """``512 B``, ``1.2 kB``, ``3.4 MB``."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def duration_text(seconds: float | None) -> str:
    """``21 ms``, ``1.20 s``; ``-`` when not measured."""
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _timed_out(error: dict[str, str]) -> bool:
    """The client's own timeout (``ReadTimeout``, ``ConnectTimeoutError``, ``TimeoutError``)."""
    return "Timeout" in error.get("type", "")


def status_text(exchange: Exchange) -> str:
    """The HTTP status, ``timed out`` or ``error`` when no answer came; for a recorded call,
    ``returned`` or ``raised``."""
    error = exchange.error
    if exchange.kind == "call":
        return "raised" if error else "returned"
    if exchange.status is not None:
        return f"{exchange.status} cut" if error else str(exchange.status)
    if error and _timed_out(error):
        return "timed out"
    return "error" if error else "-"


def call_row(exchange: Exchange) -> CallRow:
    """The list row of ``exchange`` (cheap: no body is parsed)."""
    if exchange.kind == "call":
        size = len(json.dumps(exchange.value, ensure_ascii=False)) if not exchange.error else 0
    else:
        size = sum(len(chunk) for chunk in exchange.chunks)
    failed = exchange.error is not None or (exchange.status or 0) >= 400
    return CallRow(
        exchange.seq + 1,
        visible(exchange.method[:16]),
        visible(exchange.url[:LINE_CHARS]),
        status_text(exchange),
        size_text(size),
        duration_text(exchange.duration),
        failed,
    )


def summary_line(exchange: Exchange) -> str:
    """``#1 POST http://host/v1/chat/completions · 200 · 1.2 kB · 21 ms`` (visible)."""
    row = call_row(exchange)
    return f"#{row.number} {row.method} {row.target} · {row.status} · {row.size} · {row.duration}"


# -- bodies ------------------------------------------------------------------------------


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str:
    return next((v for n, v in headers if n.lower() == name), "")


def response_bytes(exchange: Exchange) -> tuple[bytes, str]:
    """The answer's body as the client's caller read it (gzip and deflate decoded, at most
    :data:`MAX_DECODED` bytes), and a note when it was not decoded whole."""
    body = exchange.body
    encoding = _header(exchange.response_headers, "content-encoding").lower().strip()
    if encoding not in ("gzip", "deflate") or not body:
        return body, ""
    # As named first; then either wrapping (servers send gzip as deflate), then raw deflate
    # (what many servers mean by deflate): each bounded, a bomb never decoded whole.
    named = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    for wbits in (named, 32 + zlib.MAX_WBITS, -zlib.MAX_WBITS):
        decoder = zlib.decompressobj(wbits)
        try:
            data = decoder.decompress(body, MAX_DECODED)
        except zlib.error:
            continue
        note = f"(decoded from {encoding})"
        if decoder.unconsumed_tail:
            note = f"(decoded from {encoding}: the first {size_text(MAX_DECODED)} only)"
        return data, note
    return body, f"({encoding} that does not decode: shown as stored)"


def _text_of(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class _Writer:
    """Builds the view's text: every piece of data made visible, styles only our own."""

    def __init__(self) -> None:
        self.text = Text()

    def line(self, data: str = "", style: str = "", *, label: str = "", labelled: str = "") -> None:
        """One piece of data in ``style`` (it may hold line breaks), after ``label`` (our own
        words, or a role or name made visible here) in the style ``labelled``."""
        if label:
            self.text.append(visible(label), STYLES.get(labelled, labelled))
        self.data(data, style)
        self.text.append("\n")

    def note(self, words: str) -> None:
        """A line of our own words."""
        self.text.append(words + "\n", STYLES["dim"])

    def data(self, data: str, style: str = "") -> None:
        if len(data) > MAX_SHOWN:
            data = f"{data[:MAX_SHOWN]}… [{len(data) - MAX_SHOWN:,} more characters]"
        shown = visible(data, multiline=True)
        parts = shown.split(REPLACEMENT) if REPLACEMENT in shown else [shown]
        for index, part in enumerate(parts):
            if index:
                self.text.append(REMOVED, STYLES["removed"])
            self.text.append(part, STYLES.get(style, style))

    def section(self, title: str) -> None:
        self.text.append("\n")
        self.text.append(title, STYLES["section"])
        self.text.append("\n")


def _message(out: _Writer, message: dict[str, Any]) -> None:
    role = str(message.get("role") or "message")
    if role == "tool" and message.get("tool_call_id"):
        role = f"tool ({message['tool_call_id']})"
    pieces = list(content_pieces(message.get("content")))
    pieces.extend(("tool", f"→ tool call {said}") for said in tool_calls(message))
    # A message of tool calls only (an empty content beside them) starts with the first call.
    pieces = [piece for piece in pieces if piece != ("text", "")] or [("text", "")]
    for index, (kind, text) in enumerate(pieces):
        label = f"{role}: " if index == 0 else " " * (len(role) + 2)
        out.line(text, "tool" if kind == "tool" else "", label=label, labelled="role")


def _request(out: _Writer, value: Any) -> None:
    """A chat request as its settings, then its conversation; other JSON pretty-printed."""
    settings = {k: v for k, v in value.items() if k not in ("messages", "system", "tools")}
    if settings:
        said = (f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in settings.items())
        out.line(" · ".join(said), "dim")
    tools = value.get("tools")
    if isinstance(tools, list) and tools:
        names = [tool_name(tool) for tool in tools]
        out.line(", ".join(names), "dim", label="tools offered: ", labelled="dim")
    if value.get("system") is not None:
        _message(out, {"role": "system", "content": value["system"]})
    for message in value["messages"]:
        _message(out, message)


def _answer_messages(out: _Writer, messages: list[dict[str, Any]]) -> None:
    for message in messages:
        _message(out, message)
        if message.get("finish"):
            out.line(str(message["finish"]), "dim", label="finish: ", labelled="dim")


def _body(out: _Writer, data: bytes, *, request: bool, stream: bool, note: str = "") -> None:
    if not data:
        out.note("(empty)")
        return
    text = _text_of(data)
    if note:
        out.note(note)
    if text is None:
        out.note(f"({size_text(len(data))} of binary data)")
        return
    if len(data) > MAX_READ:
        out.note(f"({size_text(len(data))}: shown as text, not read as JSON or a stream)")
        out.line(text)
        return
    if stream:
        events = sse_events(text)
        messages = assemble_stream(events)
        if messages is not None:
            out.note(f"(streamed: {len(events)} events assembled into one message)")
            _answer_messages(out, messages)
            return
    is_json, value = body_json(data)
    if is_json:
        if request and is_chat_request(value):
            _request(out, value)
            return
        answer = None if request else chat_answer(value)
        if answer is not None:
            _answer_messages(out, answer)
            usage = value.get("usage")
            if isinstance(usage, dict):
                out.line(
                    json.dumps(usage, ensure_ascii=False), "dim", label="usage: ", labelled="dim"
                )
            return
        out.line(pretty_json(value))
        return
    out.line(text)


def _headers(out: _Writer, title: str, headers: tuple[tuple[str, str], ...]) -> None:
    out.section(title)
    for name, value in headers[:MAX_HEADERS]:
        out.line(shorten(value, LINE_CHARS), label=f"{shorten(name, 200)}: ", labelled="role")
    if len(headers) > MAX_HEADERS:
        out.note(f"({len(headers) - MAX_HEADERS:,} more headers)")
    out.note("(authorization, cookie, x-api-key and other secret headers: never recorded)")


def _error(out: _Writer, error: dict[str, str], answered: bool) -> None:
    kind, message = error.get("type", "Error"), error.get("message", "")
    if answered:
        what = "the answer was cut short"
    elif _timed_out(error):
        what = "timed out: no answer came"
    else:
        what = "no answer came"
    out.line(f"{kind}: {message}", "error", label=f"{what}: ", labelled="error")


def exchange_text(exchange: Exchange) -> Text:
    """The whole exchange, readable: what was asked, what answered it, then the headers."""
    out = _Writer()
    row = call_row(exchange)
    out.text.append(f"#{row.number} ", STYLES["title"])
    out.data(f"{exchange.method} {exchange.url}", "title")
    out.text.append("\n")
    facts = [row.status, row.size, row.duration]
    kind = _header(exchange.response_headers, "content-type")
    if kind:
        facts.insert(1, kind)
    out.line(" · ".join(facts), "error" if row.failed else "dim")  # visible: from call_row
    if exchange.kind == "call":
        _call(out, exchange)
        return out.text
    out.section("request")
    _body(out, exchange.request_body or b"", request=True, stream=False)
    out.section("answer")
    if exchange.error is not None:
        _error(out, exchange.error, exchange.status is not None)
    if exchange.status is not None:
        data, note = response_bytes(exchange)
        stream = "event-stream" in kind or data.lstrip().startswith((b"data:", b"event:"))
        _body(out, data, request=False, stream=stream, note=note)
    _headers(out, "request headers", exchange.request_headers)
    if exchange.status is not None:
        _headers(out, "answer headers", exchange.response_headers)
    return out.text


def _call(out: _Writer, exchange: Exchange) -> None:
    out.section("arguments")
    is_json, value = body_json(exchange.request_body)
    if is_json:
        out.line(pretty_json(value))
    else:
        out.line((exchange.request_body or b"").decode("utf-8", "backslashreplace"))
    out.section("returned")
    if exchange.error is not None:
        error = exchange.error
        out.line(f"{error.get('type')}: {error.get('message')}", "error", label="raised ",
                 labelled="error")  # fmt: skip
    else:
        out.line(pretty_json(exchange.value))


def field_diff(changes: list[FieldChange]) -> list[dict[str, Any]]:
    """Field changes as the inspector shows them: ``{"field", "change", "recorded", "sent"}``
    (the value a side lacks left out)."""
    rows = []
    for change in changes:
        row: dict[str, Any] = {"field": change.path, "change": change.kind}
        if change.kind != "added":
            row["recorded"] = change.recorded
        if change.kind != "removed":
            row["sent"] = change.sent
        rows.append(row)
    return rows


def diff_text(rows: list[dict[str, Any]]) -> str:
    """:func:`field_diff` rows for the error view: each field, then its recorded and its sent
    value on a line each (untrusted: made visible)."""
    lines = []
    for row in rows:
        lines.append(f"{row.get('field')} ({row.get('change')})")
        if "recorded" in row:
            lines.append(f"  - recorded: {json.dumps(row['recorded'], ensure_ascii=False)}")
        if "sent" in row:
            lines.append(f"  + sent:     {json.dumps(row['sent'], ensure_ascii=False)}")
    return visible("\n".join(lines), multiline=True)
