"""The YAML reader: YAML 1.2 core-schema meanings, caps, refused tags, positions on demand."""

from __future__ import annotations

import math
import os
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.workflow import yamlpos
from harness_tui.workflow.errors import WorkflowError
from harness_tui.workflow.limits import Limits, LimitsError, current
from harness_tui.workflow.loader import load_workflow, parse_workflow
from harness_tui.workflow.yamlpos import YamlSyntaxError, compose, yaml11_differences


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("true", True),
        ("False", False),
        ("~", None),
        ("null", None),
        ("", None),
        ("010", 10),
        ("0o17", 15),
        ("0x1F", 31),
        ("-12", -12),
        ("1e-7", 1e-7),
        ("1e9", 1e9),
        ("1.5", 1.5),
        (".5", 0.5),
        ("-.inf", -math.inf),
        ("2026-01-01", "2026-01-01"),
        ("1_000", "1_000"),
        ("09:30", "09:30"),  # a string in YAML 1.1 too: not ambiguous, so not refused
        ("12:75", "12:75"),
        ("0b101", "0b101"),
        ("builtin:echo", "builtin:echo"),
        ("'1'", "1"),
        ("!!str 12", "12"),
        ("!!float 3", 3.0),
        ("!!int '7'", 7),
        ("! 12", "12"),  # the non-specific tag: a string (YAML 1.2, 6.9.1)
        ("! true", "true"),
        ("! ~", "~"),
        ("a\u2028b", "a\u2028b"),  # NEL, LS and PS are content in YAML 1.2, not breaks
        ("a\u2029b", "a\u2029b"),
        ("a\x85b c", "a\x85b c"),
        ('"a\u2028b"', "a\u2028b"),
    ],
)
def test_scalars_mean_what_yaml_1_2_core_says(text: str, value: Any) -> None:
    read = compose(f"v: {text}\n").data["v"]
    assert read == value
    assert type(read) is type(value)


def test_nan_reads_as_nan() -> None:
    assert math.isnan(compose("v: .NaN\n").data["v"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("v: 1:30", "1:4: '1:30' is a base-60 number in YAML 1.1 and a string in YAML 1.2"),
        ("v: !!python/name:os.system x", "1:4: tag '!!python/name:os.system' is not allowed"),
        ("v: !!set {a}", "1:4: unsupported tag '!!set'"),
        ("v: !local [1]", "1:4: unsupported tag '!local'"),
        ("v: !!int x", "1:4: 'x' is not a valid !!int"),
        ("v: &a [*a]", "1:8: alias *a refers to a value that contains it"),
        ("v: *nowhere", "1:4: alias *nowhere has no anchor &nowhere before it"),
        ("1: x", "1:1: mapping keys must be strings"),
        ("null: x", "1:1: mapping keys must be strings"),
        ("? [a]\n: x", "1:3: mapping keys must be strings"),
        ("a: 1\n---\nb: 2", "2:1: a workflow file holds one YAML document, not several"),
        ("%YAML 1.1\n---\nv: yes", "1:1: %YAML 1.1: files are read as YAML 1.2 only"),
        ("a:\n  b: c\x7f", "2:7: YAML syntax error: control characters are not allowed (#x007f)"),
        ("é: \x01", "1:4: YAML syntax error: control characters are not allowed (#x0001)"),
        ("a:\n  \ud800: x", "2:3: not Unicode text: lone surrogate \\ud800"),
        ("v: " + "[" * 101 + "]" * 101, "1:103: nested more than 100 levels deep"),
        ("v: " + "9" * 1001, "1:4: an integer has 1,001 digits; the limit is 1,000"),
        ("v: 0x" + "f" * 1001, "1:4: an integer has more than 1,000 digits"),
    ],
)
def test_refused_yaml_gets_one_line_with_its_position(text: str, message: str) -> None:
    with pytest.raises(YamlSyntaxError) as caught:
        compose(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "added"),
    [
        # Each alias adds what it stands for as JSON: '"xxxx"' is 6 bytes, '["xxxx","xxxx"]'
        # 15, '{"k":"é"}' 10 (é is two bytes), '[1,null]' 8.
        ('s: &s "xxxx"\nb: [*s, *s]\n', 12),
        ('s: &s "xxxx"\np: &p [*s, *s]\nl: [*p, *p]\n', 12 + 30),
        ("m: &m {k: é}\nl: [*m]\n", 10),
        ("n: &n [1, null]\nl: [*n, *n, *n]\n", 24),
        ('s: &s "xxxx"\nl: [{*s : 1}, {*s : 2}]\n', 12),
    ],
)
def test_aliases_count_the_bytes_of_what_they_stand_for(text: str, added: int) -> None:
    compose(text, Limits(alias_bytes=added))
    with pytest.raises(YamlSyntaxError, match=f"more than {added - 1} bytes"):
        compose(text, Limits(alias_bytes=added - 1))


def test_caps_are_adjustable() -> None:
    bomb = "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n"
    assert compose(bomb).data["b"] == [[1, 2, 3]] * 3
    with pytest.raises(YamlSyntaxError, match="aliases expand to more than 8 values"):
        compose(bomb, Limits(alias_nodes=8))
    with pytest.raises(YamlSyntaxError, match="a value has 5 characters; the limit is 4"):
        compose("a: hello", Limits(string_chars=4))
    with pytest.raises(YamlSyntaxError, match="nested more than 2 levels deep"):
        compose("a: {b: [1]}", Limits(depth=2))


def test_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "payload_bytes=2_000, tasks=7")
    assert current() == Limits(payload_bytes=2000, tasks=7)
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "tasks=-1")
    with pytest.raises(LimitsError, match="tasks must be a positive integer, not '-1'"):
        current()
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "bogus=1")
    with pytest.raises(LimitsError, match="unknown limit 'bogus'"):
        current()


def test_payload_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "name: w\npayload: {blob: " + "x" * 3000 + "}\ntasks: {a: {run: builtin:echo}}\n"
    assert parse_workflow(text).payload["blob"] == "x" * 3000
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "payload_bytes=2048")
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(text)
    assert str(caught.value) == "<string>:2:10: payload is 3,012 bytes as JSON; the limit is 2,048"


def test_positions_are_read_only_when_a_problem_is_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []
    real = yamlpos._record_positions
    monkeypatch.setattr(yamlpos, "_record_positions", lambda *a: (calls.append(1), real(*a))[1])
    good = "name: w\ntasks:\n  a: {run: builtin:echo}\n  b: {run: builtin:echo, depends_on: [a]}\n"
    parse_workflow(good)
    assert calls == []
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(good.replace("[a]", "[a, zz]"))
    assert str(caught.value) == "<string>:4:42: task 'b' depends on unknown task 'zz'"
    assert calls == [1]


def test_duplicates_are_reported_at_both_places() -> None:
    located = compose("a:\n  - {x: 1, y: 2, x: 3}\n  - [k]\nb: &n 1\nb: *n\n")
    assert located.data == {"a": [{"x": 1, "y": 2}, ["k"]], "b": 1}
    assert located.duplicates == [(("a", 0, "x"), (2, 6), (2, 18)), (("b",), (4, 1), (5, 1))]
    assert located.position(("a", 1, 0)) == (3, 6)
    assert located.key_position(("b",)) == (4, 1)


def test_yaml_1_1_differences_are_listed() -> None:
    text = "a: yes\nb: 010\nc: 1e-7\nd: 2026-01-01\ne: [plain, 1, 'yes']\nf: 0o17\n"
    found = yaml11_differences(text)
    assert [(line, col) for line, col, _ in found] == [(1, 4), (2, 4), (3, 4), (4, 4), (6, 4)]
    assert found[0][2] == (
        "'yes' is a string (YAML 1.2) but true in YAML 1.1; quote it or write it so that both agree"
    )
    assert "the number 10 (YAML 1.2) but the number 8 in YAML 1.1" in found[1][2]


def test_validate_warns_about_yaml_1_1_meanings(tmp_path: Path) -> None:
    file = tmp_path / "w.yaml"
    file.write_text("name: w\npayload: {flag: on}\ntasks: {a: {run: builtin:echo}}\n")
    result = CliRunner().invoke(cli, ["validate", str(file)])
    assert result.exit_code == 0
    assert result.stderr == (
        f"{file}:2:17: warning: 'on' is a string (YAML 1.2) but true in YAML 1.1; "
        "quote it or write it so that both agree\n"
    )


@pytest.mark.parametrize("loader", [yamlpos._Loader, yaml.SafeLoader], ids=["libyaml", "python"])
def test_yaml_1_1_line_breaks_are_content_and_lines_count_right(
    loader: type[yaml.SafeLoader], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yamlpos, "_Loader", loader)
    text = "%YAML 1.2\n---\na: x\u2028y\u2029z\x85w\n\ue000b: 1\nc: [1, oops: 2]\n"
    read = compose(text)
    assert read.data["a"] == "x\u2028y\u2029z\x85w" and read.data["\ue000b"] == 1
    assert read.position(("c",)) == (5, 4)
    assert read.key_position(("\ue000b",)) == (4, 1)


def test_the_pure_python_parser_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "name: w\npayload: {a: [1, 2.5, yes, ~]}\ntasks:\n  a: {run: builtin:echo}\n"
    fast = compose(text).data
    monkeypatch.setattr(yamlpos, "_Loader", yaml.SafeLoader)
    assert compose(text).data == fast
    with pytest.raises(
        YamlSyntaxError, match=r"^1:4: YAML syntax error: [a-z]+ characters are not allowed"
    ):
        compose("é: \x01")


def _load_in_thread(path: str) -> str:
    found: list[str] = []

    def work() -> None:
        try:
            load_workflow(path)
        except WorkflowError as exc:
            found.append(str(exc))

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(5)
    assert not thread.is_alive(), f"reading {path} did not return"
    return found[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    assert _load_in_thread(str(fifo)) == f"{fifo}: cannot read: not a regular file (a named pipe)"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_device_is_refused_without_reading_it() -> None:
    message = _load_in_thread("/dev/zero")
    assert message == "/dev/zero: cannot read: not a regular file (a character device)"
