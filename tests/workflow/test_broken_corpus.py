"""Every broken file gives exactly its expected lines: file:line:col: message."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.workflow.errors import WorkflowError
from harness_tui.workflow.loader import load_workflow

BROKEN = Path(__file__).parent / "broken"
FILES = sorted(BROKEN.glob("*.yaml"))


def test_corpus_is_large_enough() -> None:
    assert len(FILES) >= 30


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_broken_file_reports_exact_problems(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    expected = path.with_suffix(".expected").read_text(encoding="utf-8")
    with pytest.raises(WorkflowError) as caught:
        load_workflow(path.name)
    assert "\n".join(str(p) for p in caught.value.problems) + "\n" == expected


@pytest.mark.parametrize("path", FILES[::5], ids=[p.stem for p in FILES[::5]])
def test_validate_prints_the_lines_and_exits_2(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    result = CliRunner().invoke(cli, ["validate", path.name])
    assert result.exit_code == 2
    assert result.stderr == path.with_suffix(".expected").read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" not in result.output


@pytest.mark.parametrize("name", ["54_when_nested_deep", "55_when_negated_deep"])
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_a_deeply_nested_when_is_one_line(
    name: str, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(BROKEN)
    result = CliRunner().invoke(cli, [command, f"{name}.yaml"])
    assert result.exit_code == 2
    assert result.stderr == (BROKEN / f"{name}.expected").read_text(encoding="utf-8")


def test_a_when_nested_to_the_limit_is_read_and_decides() -> None:
    from harness_tui.workflow.expressions import ConditionError, condition

    scope = {"payload": {"x": 1}, "results": {}}
    assert condition("(" * 99 + "payload.x" + ")" * 99)(scope) is True
    assert condition("!" * 98 + "payload")(scope) is True
    assert condition("!" * 99 + "payload")(scope) is False  # 100 levels: 99 nots, a field
    with pytest.raises(ConditionError, match="'when' is nested more than 100 levels deep"):
        condition("!" * 100 + "payload")
