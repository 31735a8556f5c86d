"""One payload parser for the command line, the workbench and the payload editor."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_tui.workflow.payload import Payload, PayloadError, editable_text, parse_payload


def test_json_text_and_files_parse_to_the_same_value(tmp_path: Path) -> None:
    file = tmp_path / "p.json"
    file.write_text('{"user_id": "u001", "tags": ["é"]}', encoding="utf-8")
    assert parse_payload(f"@{file}") == parse_payload('{"tags": ["é"], "user_id": "u001"}')
    assert parse_payload("null") == Payload(None)  # null is a payload, not "no payload"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{nope", "--payload: not JSON: Expecting property name"),
        ("@/no/such/file.json", "--payload: cannot read /no/such/file.json"),
        ("NaN", "--payload: payload: float is not a JSON value"),
        ("[" * 100_000, "--payload: nested too deeply"),
        ('"\\ud800"', "--payload: payload: str is not a JSON value (not valid Unicode text"),
        ("@nul\x00name", "--payload: cannot read 'nul\\x00name': a NUL in the name"),
        ("@\x85\x1b[2J", "--payload: cannot read \\x85\\x1b[2J: No such file"),
    ],
)
def test_bad_payloads_are_one_line(text: str, message: str) -> None:
    with pytest.raises(PayloadError) as caught:
        parse_payload(text, "--payload")
    assert str(caught.value).startswith(message)
    assert len(str(caught.value).splitlines()) == 1  # NEL and other breaks made visible too


def test_a_payload_file_that_is_not_utf8(tmp_path: Path) -> None:
    file = tmp_path / "p.json"
    file.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(PayloadError, match="not UTF-8"):
        parse_payload(f"@{file}")


def test_the_editable_text_parses_back() -> None:
    value = {"b": [1, 2.5, None], "a": "é"}
    assert editable_text(value).startswith('{\n  "a": "é"')
    assert parse_payload(editable_text(value)).value == value


def test_a_payload_over_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    text = '{"blob": "' + "é" * 600 + '"}'
    assert parse_payload(text).value == {"blob": "é" * 600}
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "payload_bytes=1000")
    with pytest.raises(PayloadError) as caught:
        parse_payload(text, "--payload")
    assert str(caught.value) == (
        "--payload: 1,211 bytes as JSON; the limit is 1,000 "
        "(raise it with HARNESS_TUI_LIMITS=payload_bytes=N)"
    )
