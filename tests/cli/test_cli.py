"""The CLI as a user types it: exit codes 0/1/2, one clear line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "workflows").glob("*.yaml"))


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback (most recent call last)" not in result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_validate_plan_run_on_every_shipped_workflow(path: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("validate", str(path))
    assert code == 0 and out.startswith(f"ok: {path} (")
    code, out, _ = invoke("plan", str(path), "--json")
    document = json.loads(out)
    assert code == 0
    assert set(document) == {"workflow", "payload_digest", "plan", "plan_digest"}
    assert [row["index"] for row in document["plan"]] == list(range(len(document["plan"])))
    code, out, _ = invoke("plan", str(path))
    assert code == 0 and "plan digest:" in out
    code, _, err = invoke("run", str(path), "--store", str(tmp_path / "runs.db"))
    assert code == 0, err
    assert "run digest:" in err and "run id:" in err


def test_plan_payload_from_file_changes_ids(tmp_path: Path) -> None:
    payload = tmp_path / "p.json"
    payload.write_text('{"user_id": "u002"}')
    wf = str(ROOT / "workflows/user_profile.yaml")
    _, default, _ = invoke("plan", wf, "--json")
    code, other, _ = invoke("plan", wf, "--json", "--payload", f"@{payload}")
    assert code == 0
    assert json.loads(default)["plan_digest"] != json.loads(other)["plan_digest"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            "{not json",
            "error: --payload: not JSON: Expecting property name enclosed in double quotes",
        ),
        ("@/no/such/file.json", "error: --payload: cannot read /no/such/file.json"),
        ("NaN", "error: --payload: payload: float is not a JSON value"),
    ],
)
def test_bad_payload_is_one_line_and_exit_2(payload: str, message: str) -> None:
    code, _, err = invoke("plan", str(ROOT / "workflows/user_profile.yaml"), "--payload", payload)
    assert code == 2
    assert err.startswith(message)
    assert len(err.strip().splitlines()) == 1


def test_failed_run_exits_1(tmp_path: Path) -> None:
    wf = tmp_path / "fails.yaml"
    wf.write_text("name: fails\ntasks:\n  a: {run: builtin:fail, with: {message: nope}}\n")
    code, _, err = invoke("run", str(wf), "--no-store")
    assert code == 1
    assert "a: RuntimeError: nope" in err


def test_missing_file_exits_2() -> None:
    code, _, err = invoke("run", "no/such/workflow.yaml", "--no-store")
    assert code == 2
    assert err.strip() == "no/such/workflow.yaml: cannot read: No such file or directory"


def test_schema_and_generate() -> None:
    code, out, _ = invoke("schema", "workflow")
    assert code == 0 and json.loads(out)["title"] == "harness-tui workflow"
    code, out, _ = invoke("schema", "run")
    assert code == 0 and json.loads(out)["title"] == "harness-tui run export"
    code, out, _ = invoke("generate", "--tasks", "5", "--shape", "chain")
    assert code == 0 and out.count("run: builtin:echo") == 5


def test_plan_does_not_import_textual_and_starts_fast() -> None:
    code = (
        "import sys, time; t = time.perf_counter(); "
        "from harness_tui.cli import cli; "
        "cli(['plan', 'workflows/user_profile.yaml', '--json'], standalone_mode=False); "
        "print('TEXTUAL' if 'textual' in sys.modules else 'NO-TEXTUAL')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip().endswith("NO-TEXTUAL")


def test_verify_across_hash_seeds(tmp_path: Path) -> None:
    code, out, _ = invoke("verify", str(ROOT / "workflows/user_profile.yaml"), "--runs", "3")
    assert code == 0
    assert out.startswith("deterministic: 3 runs under different hash seeds agree")
    (tmp_path / "seeded_by_hash.py").write_text(
        "def pick(inputs):\n    return sorted({'a', 'b', 'c', 'd', 'e'}, key=hash)[0]\n"
    )
    wf = tmp_path / "wf.yaml"
    wf.write_text("name: hashy\ntasks:\n  pick: {run: 'seeded_by_hash:pick'}\n")
    code, out, _ = invoke("verify", str(wf), "--runs", "4")
    assert code == 1
    assert out.startswith("not deterministic: run ")
    assert "task pick" in out and "output_digest" in out


def test_every_command_reports_a_harness_error_as_one_line_and_exit_2(tmp_path: Path) -> None:
    from harness_tui.engine.errors import HarnessError

    runner = CliRunner()
    store = str(tmp_path / "runs.db")
    broken = tmp_path / "bad.json"
    broken.write_text('{"format": "harness-run", "format_version": "1.0", ')  # truncated
    cases = [
        ["resume", "nope", "--store", store],
        ["export", "nope", str(tmp_path / "x.json"), "--store", store],
        ["replay", str(broken)],
        ["diff", str(broken), str(broken)],
    ]
    for args in cases:
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, lines)
        assert not isinstance(result.exception, HarnessError)


def test_the_workbench_takes_a_payload_file_like_plan_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_tui.tui.app import HarnessApp

    payload = tmp_path / "p.json"
    payload.write_text('{"user_id": "u042"}')
    opened: list[object] = []
    monkeypatch.setattr(HarnessApp, "run", lambda self, **kw: opened.append(self.session))
    workflow = str(ROOT / "workflows/user_profile.yaml")
    result = CliRunner().invoke(cli, [workflow, "--payload", f"@{payload}", "--no-store"])
    assert result.exit_code == 0, result.output
    (session,) = opened
    assert session.payload == {"user_id": "u042"}  # type: ignore[attr-defined]
    planned = CliRunner().invoke(cli, ["plan", workflow, "--payload", f"@{payload}", "--json"])
    assert json.loads(planned.stdout)["plan"] == session.run.plan.to_json()  # type: ignore[attr-defined]
    bad = CliRunner().invoke(cli, [workflow, "--payload", "@missing.json", "--no-store"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --payload: cannot read")


def test_the_workbench_refuses_bad_input_with_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_tui.tui.app import HarnessApp

    started: list[object] = []
    monkeypatch.setattr(HarnessApp, "run", lambda self, **kw: started.append(self))
    truncated = tmp_path / "truncated.json"
    truncated.write_text('{"format": "harness-run", "format_version": "1.1", "trace": [')
    cycle = tmp_path / "cycle.yaml"
    cycle.write_text(
        "name: c\ntasks:\n  a: {run: builtin:echo, depends_on: [b]}\n"
        "  b: {run: builtin:echo, depends_on: [a]}\n"
    )
    cases = [
        ([str(tmp_path / "nope.yaml"), "--no-store"], "nope.yaml"),
        (["show", str(truncated)], "not JSON"),
        (["show", str(ROOT / "workflows/user_profile.yaml")], "not a run export"),
        ([str(cycle), "--no-store"], "cycle: a -> b -> a"),
    ]
    for args, expected in cases:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, lines)
    assert started == []  # the app never started


def test_diff_of_an_export_and_a_workflow_is_one_clear_line(tmp_path: Path) -> None:
    export = tmp_path / "run.json"
    workflow = str(ROOT / "workflows/user_profile.yaml")
    runner = CliRunner()
    made = runner.invoke(cli, ["run", workflow, "--no-store", "-q", "--export", str(export)])
    assert made.exit_code == 0, made.output
    for args in ([str(export), workflow], [workflow, str(export)]):
        result = runner.invoke(cli, ["diff", *args])
        assert result.exit_code == 2
        (line,) = result.stderr.strip().splitlines()
        assert "is a run and" in line and "verify" in line


def test_plan_piped_is_one_tab_separated_line_per_task() -> None:
    code, out, _ = invoke("plan", str(ROOT / "workflows/user_profile.yaml"))
    lines = out.splitlines()
    assert code == 0 and lines[0].split("\t") == ["#", "task", "task_id", "level", "depends_on"]
    assert lines[1].split("\t")[:2] == ["0", "extract_user_info"]
    assert lines[4].split("\t")[4] == "check_quota, enrich_user_data"
    assert lines[5].startswith("plan digest: ") and len(lines) == 6
