"""What a chat body says, whoever's API it follows: the messages of a request, of an answer,
and of a stream of server-sent events assembled into the messages its chunks spell.

Plain data from untrusted JSON (every field checked before use): :mod:`.call_text` lays it
out and makes it visible.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

__all__ = [
    "assemble_stream",
    "chat_answer",
    "content_pieces",
    "is_chat_request",
    "pretty_json",
    "sse_events",
    "tool_args",
    "tool_calls",
    "tool_name",
]


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except RecursionError:  # indented JSON is encoded in Python: a deep document is one line
        return json.dumps(value, ensure_ascii=False)


def content_pieces(content: Any) -> Iterator[tuple[str, str]]:
    """A message's content as ``(kind, text)`` pieces: ``text``, or ``tool`` for tool use."""
    if isinstance(content, str):
        yield "text", content
        return
    if not isinstance(content, list):
        if content is not None:
            yield "text", pretty_json(content)
        return
    for block in content:
        if not isinstance(block, dict):
            yield "text", pretty_json(block)
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            yield "text", block["text"]
        elif block.get("type") == "tool_use":
            yield "tool", f"→ tool call {block.get('name')}({tool_args(block.get('input'))})"
        elif block.get("type") == "tool_result":
            for _, text in content_pieces(block.get("content")):
                yield "tool", f"← tool result ({block.get('tool_use_id', '')}): {text}"
        else:
            yield "text", f"[{block.get('type', 'part')}]"


def tool_args(arguments: Any) -> str:
    """Tool call arguments, JSON (a string holding JSON is read first) on one line."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return str(arguments)
    return json.dumps(arguments, ensure_ascii=False)


def is_chat_request(value: Any) -> bool:
    """A request body holding a conversation (``messages``, a list of objects)."""
    messages = value.get("messages") if isinstance(value, dict) else None
    return isinstance(messages, list) and all(isinstance(m, dict) for m in messages)


def tool_name(tool: Any) -> str:
    """The name of a tool a request offers (OpenAI ``function.name``, or Anthropic ``name``)."""
    if isinstance(tool, dict):
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else tool.get("name")
        return str(name)
    return str(tool)


def chat_answer(value: Any) -> list[dict[str, Any]] | None:
    """The messages of a chat answer (OpenAI ``choices``, or an Anthropic message)."""
    if not isinstance(value, dict):
        return None
    choices = value.get("choices")
    if isinstance(choices, list) and choices and all(isinstance(c, dict) for c in choices):
        found = []
        for choice in choices:
            message = choice.get("message")
            if not isinstance(message, dict):
                return None
            found.append({**message, "finish": choice.get("finish_reason")})
        return found
    if value.get("type") == "message" and isinstance(value.get("content"), list):
        return [{"role": value.get("role", "assistant"), "content": value["content"],
                 "finish": value.get("stop_reason")}]  # fmt: skip
    return None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _index(item: dict[str, Any]) -> int:
    index = item.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else 0


def sse_events(text: str) -> list[str]:
    """The ``data`` of each server-sent event in ``text``, in order."""
    events: list[str] = []
    data: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line:
            if data:
                events.append("\n".join(data))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        events.append("\n".join(data))
    return events


def _new_message() -> dict[str, Any]:
    # Text arrives in pieces, kept in lists and joined once: adding each piece to a string
    # held in a dict copies it whole every time (a long stream took seconds).
    return {"role": "assistant", "content": [], "calls": {}, "finish": None}


def _openai_chunk(chunk: dict[str, Any], messages: dict[int, dict[str, Any]]) -> bool:
    """Add an OpenAI chunk's ``choices[].delta`` to ``messages``; True if it had any."""
    found = False
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        found = True
        message = messages.setdefault(_index(choice), _new_message())
        if isinstance(delta.get("role"), str):
            message["role"] = delta["role"]
        if isinstance(delta.get("content"), str):
            message["content"].append(delta["content"])
        for call in delta.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            slot = message["calls"].setdefault(_index(call), {"name": [], "arguments": []})
            function = _mapping(call.get("function"))
            slot["name"].append(str(function.get("name") or ""))
            slot["arguments"].append(str(function.get("arguments") or ""))
        if choice.get("finish_reason"):
            message["finish"] = choice["finish_reason"]
    return found


def _anthropic_event(
    chunk: dict[str, Any], blocks: dict[int, dict[str, Any]], messages: dict[int, dict[str, Any]]
) -> bool:
    """Add an Anthropic stream event to its content ``blocks``; True if it was one."""
    kind, delta = chunk.get("type"), chunk.get("delta")
    if kind == "content_block_start" and isinstance(chunk.get("content_block"), dict):
        block = chunk["content_block"]
        blocks[_index(chunk)] = {"type": block.get("type"), "name": block.get("name"),
                                 "text": [], "json": []}  # fmt: skip
        return True
    if kind == "content_block_delta" and isinstance(delta, dict):
        empty = {"type": "text", "text": [], "json": []}
        block = blocks.setdefault(_index(chunk), empty)
        block["text"].append(str(delta.get("text") or ""))
        block["json"].append(str(delta.get("partial_json") or ""))
        return True
    if kind == "message_delta" and isinstance(delta, dict):
        messages.setdefault(0, _new_message())["finish"] = delta.get("stop_reason")
    return False


def assemble_stream(events: list[str]) -> list[dict[str, Any]] | None:
    """The messages a chat stream's chunks spell (OpenAI ``choices[].delta`` or Anthropic
    ``content_block_delta``), or None when the events are not a chat stream."""
    messages: dict[int, dict[str, Any]] = {}
    blocks: dict[int, dict[str, Any]] = {}
    recognised = False
    for data in events:
        if data.strip() == "[DONE]":
            continue
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):
            return None
        if not isinstance(chunk, dict):
            return None
        recognised = _openai_chunk(chunk, messages) or recognised
        recognised = _anthropic_event(chunk, blocks, messages) or recognised
    if not recognised:
        return None
    if blocks:
        content = [
            {"type": "tool_use", "name": b.get("name"), "input": "".join(b["json"])}
            if b.get("type") == "tool_use"
            else {"type": "text", "text": "".join(b["text"])}
            for _, b in sorted(blocks.items())
        ]
        finish = messages.get(0, {}).get("finish")
        return [{"role": "assistant", "content": content, "finish": finish}]
    return [
        {
            "role": m["role"],
            "content": "".join(m["content"]),
            "tool_calls": [
                {
                    "function": {
                        "name": "".join(slot["name"]),
                        "arguments": "".join(slot["arguments"]),
                    }
                }
                for _, slot in sorted(m["calls"].items())
            ],
            "finish": m["finish"],
        }
        for _, m in sorted(messages.items())
    ]


def tool_calls(message: dict[str, Any]) -> list[str]:
    """A message's OpenAI-style tool calls, each as ``name(arguments)``."""
    said = []
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = _mapping(call.get("function")) or call
            said.append(f"{function.get('name')}({tool_args(function.get('arguments'))})")
    return said
