"""Plan diff: table-driven cases for every kind, on small pairs and the shipped versions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.engine.diff import MARKERS, DiffKind, plan_diff
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]


def graph(spec: dict[str, dict[str, Any]]) -> TaskGraph:
    return TaskGraph.from_nodes(
        TaskNode(
            name,
            None,
            tuple(fields.get("deps", ())),
            max_retries=fields.get("retries", 0),
            params=fields.get("with", {}),
            ref=fields.get("run", "builtin:echo"),
            when_source=fields.get("when", ""),
        )
        for name, fields in spec.items()
    )


BASE = {"a": {}, "b": {"deps": ["a"]}, "c": {"deps": ["a"]}, "d": {"deps": ["b", "c"]}}

CASES = {
    "identical": (BASE, BASE, {}, {"a": "unchanged", "d": "unchanged"}),
    "added": (BASE, {**BASE, "e": {"deps": ["d"]}}, {}, {"e": "added"}),
    "removed": (BASE, {k: v for k, v in BASE.items() if k != "c"} | {"d": {"deps": ["b"]}}, {},
                {"c": "removed", "d": "changed"}),
    "changed-retries": (BASE, {**BASE, "b": {"deps": ["a"], "retries": 3}}, {}, {"b": "changed"}),
    "changed-with": (BASE, {**BASE, "c": {"deps": ["a"], "with": {"x": 1}}}, {}, {"c": "changed"}),
    "changed-run": (BASE, {**BASE, "a": {"run": "mod:other"}}, {}, {"a": "changed"}),
    "changed-when": (BASE, {**BASE, "d": {"deps": ["b", "c"], "when": "payload.go"}}, {},
                     {"d": "changed"}),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_kinds(case: str) -> None:
    old, new, payload, expected = CASES[case]
    result = plan_diff(graph(old), payload, graph(new), payload)
    for task, kind in expected.items():
        assert result.tasks[task].kind == kind, (task, result.tasks[task])
    assert result.identical == (case == "identical")
    assert result.counts["unchanged"] == sum(
        1 for c in result.tasks.values() if c.kind == "unchanged"
    )


def test_changed_fields_are_reported_with_old_and_new() -> None:
    new = {**BASE, "d": {"deps": ["b"], "retries": 2}}
    change = plan_diff(graph(BASE), {}, graph(new), {}).tasks["d"]
    assert change.fields["depends_on"] == {
        "old": ["b", "c"], "new": ["b"], "added": [], "removed": ["c"],
    }  # fmt: skip
    assert change.fields["max_retries"] == {"old": 0, "new": 2}


def test_payload_only_change_moves_siblings_and_changes_every_id() -> None:
    fan = {"root": {}, **{f"leaf{i}": {"deps": ["root"]} for i in range(8)}}
    result = plan_diff(graph(fan), {"v": 1}, graph(fan), {"v": 2})
    assert all(change.id_changed for change in result.tasks.values())
    assert result.counts["moved"] > 0
    assert result.counts["changed"] == result.counts["added"] == result.counts["removed"] == 0
    assert not result.identical


def test_a_pure_rename_is_one_renamed_task() -> None:
    fan = {"root": {}, **{f"leaf{i}": {"deps": ["root"]} for i in range(6)}}
    renamed = {("leaf3_renamed" if k == "leaf3" else k): v for k, v in fan.items()}
    result = plan_diff(graph(fan), {}, graph(renamed), {})
    assert "leaf3" not in result.tasks
    change = result.tasks["leaf3_renamed"]
    assert (change.kind, change.renamed_from) == ("renamed", "leaf3")
    # The new name has a new task id, so the task lands elsewhere among its siblings.
    assert change.old_id != change.new_id and change.old_index is not None
    # Like a moved task it shows at its old place and at its new one.
    renamed_rows = [row for row in result.rows if row.kind is DiffKind.RENAMED]
    assert sorted((r.old is None, r.new is None) for r in renamed_rows) == [
        (False, True),
        (True, False),
    ]
    assert result.counts[DiffKind.RENAMED] == 1
    assert result.changes_run and "1 renamed" in result.summary_line()


CHAIN = {"a": {}, "b": {"deps": ["a"], "with": {"x": 1}}, "c": {"deps": ["b"]}}


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        # b -> b2, nothing else: c's dependency follows the rename, c is unchanged.
        ({"a": {}, "b2": {"deps": ["a"], "with": {"x": 1}}, "c": {"deps": ["b2"]}},
         {"b2": "renamed", "c": "unchanged", "a": "unchanged"}),
        # Renamed and changed: a removal and an addition (c's dependency changed).
        ({"a": {}, "b2": {"deps": ["a"], "with": {"x": 2}}, "c": {"deps": ["b2"]}},
         {"b": "removed", "b2": "added", "c": "changed"}),
        # Two added tasks fit the removed one: ambiguous, so no rename.
        ({"a": {}, "b2": {"deps": ["a"], "with": {"x": 1}},
          "b3": {"deps": ["a"], "with": {"x": 1}}, "c": {"deps": ["b2", "b3"]}},
         {"b": "removed", "b2": "added", "b3": "added"}),
    ],
)  # fmt: skip
def test_renames_follow_the_strict_rule(new: dict[str, Any], expected: dict[str, str]) -> None:
    result = plan_diff(graph(CHAIN), {}, graph(new), {})
    assert {name: result.tasks[name].kind.value for name in expected} == expected


def test_level_changes_are_reported() -> None:
    new = {**BASE, "c": {"deps": ["b"]}}
    change = plan_diff(graph(BASE), {}, graph(new), {}).tasks["c"]
    assert change.level_changed and (change.old_level, change.new_level) == (1, 2)


def test_release_versions() -> None:
    v1 = load_workflow(ROOT / "workflows/release_v1.yaml")
    v2 = load_workflow(ROOT / "workflows/release_v2.yaml")
    result = plan_diff(v1.graph, v1.payload, v2.graph, v2.payload)
    kinds = {name: change.kind for name, change in result.tasks.items()}
    assert kinds == {
        "checkout": "unchanged", "unit_tests": "unchanged", "smoke_test": "unchanged",
        "static_analysis": "added", "security_scan": "added",
        "lint": "removed", "notify": "removed",
        "docs": "moved",
        "build": "changed", "package": "changed", "deploy_staging": "changed",
        "deploy_prod": "changed",
    }  # fmt: skip
    assert set(result.tasks["package"].fields) == {"depends_on", "with"}
    assert result.summary_line() == (
        "2 added, 2 removed, 1 moved, 4 changed, 8 task ids changed (the payload changed), "
        "payload: 1 value changed"
    )
    assert result.payload == [{"path": "$.version", "old": "1.4.0", "new": "1.5.0"}]
    rows = [
        (r.kind, r.old.task if r.old else None, r.new.task if r.new else None) for r in result.rows
    ]
    assert ("moved", None, "docs") in rows and ("moved", "docs", None) in rows


def test_diff_json_is_byte_identical_for_the_same_inputs() -> None:
    v1 = load_workflow(ROOT / "workflows/release_v1.yaml")
    v2 = load_workflow(ROOT / "workflows/release_v2.yaml")
    texts = {plan_diff(v1.graph, v1.payload, v2.graph, v2.payload).to_text() for _ in range(3)}
    assert len(texts) == 1


def test_cli_diff_exit_code_and_summary() -> None:
    runner = CliRunner()
    v1, v2 = str(ROOT / "workflows/release_v1.yaml"), str(ROOT / "workflows/release_v2.yaml")
    same = runner.invoke(cli, ["diff", v1, v1, "--exit-code"])
    assert same.exit_code == 0
    differ = runner.invoke(cli, ["diff", v1, v2, "--exit-code"])
    assert differ.exit_code == 1
    assert differ.stdout.strip().endswith(
        "8 task ids changed (the payload changed), payload: 1 value changed"
    )
    assert '~ payload $.version: "1.4.0" -> "1.5.0"' in differ.stdout
    payload_only = runner.invoke(
        cli, ["diff", v1, v1, "--old-payload", '{"v": 1}', "--new-payload", '{"v": 2}', "--json"]
    )
    assert payload_only.exit_code == 0
    assert '"moved"' in payload_only.stdout


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_diff_by_git_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "test@example.invalid")
    _git(repo, "config", "user.name", "test")
    wf = repo / "wf.yaml"
    wf.write_text("name: wf\ntasks:\n  a: {run: builtin:echo}\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    wf.write_text(
        "name: wf\ntasks:\n  a: {run: builtin:echo}\n  b: {run: builtin:echo, depends_on: [a]}\n"
    )
    _git(repo, "commit", "-qam", "two")
    monkeypatch.chdir(repo)
    runner = CliRunner()
    result = runner.invoke(cli, ["diff", "wf.yaml@HEAD~1", "wf.yaml@HEAD", "--json"])
    assert result.exit_code == 0, result.output
    assert '"added": 1' in result.stdout
    missing_rev = runner.invoke(cli, ["diff", "wf.yaml@nope", "wf.yaml"])
    assert missing_rev.exit_code == 2
    assert missing_rev.stderr.strip() == "wf.yaml@nope: unknown git revision 'nope'"
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "x.yaml").write_text("name: x\ntasks:\n  a: {run: builtin:echo}\n")
    monkeypatch.chdir(outside)
    no_repo = runner.invoke(cli, ["diff", "x.yaml@HEAD", "x.yaml"])
    assert no_repo.exit_code == 2
    assert "is not in a git repository" in no_repo.stderr


def test_diff_of_two_exports_prints_the_trace_divergence(tmp_path: Path) -> None:
    runner = CliRunner()
    wf = ROOT / "workflows/user_profile.yaml"
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert (
        runner.invoke(cli, ["run", str(wf), "--no-store", "-q", "--export", str(one)]).exit_code
        == 0
    )
    result = runner.invoke(
        cli,
        [
            "run",
            str(wf),
            "--no-store",
            "-q",
            "--export",
            str(two),
            "--payload",
            '{"user_id": "u9"}',
        ],
    )
    assert result.exit_code == 0
    same = runner.invoke(cli, ["diff", str(one), str(one)])
    assert same.stdout.startswith("traces agree task by task")
    differ = runner.invoke(cli, ["diff", str(one), str(two), "--exit-code"])
    assert differ.exit_code == 1
    assert differ.stdout.startswith(
        "workflows: 0 added, 0 removed, 0 moved, 0 changed, 4 task ids changed"
    )


def test_kinds_are_one_enum_and_json_holds_their_values() -> None:
    assert set(MARKERS) == set(DiffKind)
    old, new, _, _ = CASES["added"]
    result = plan_diff(graph(old), {}, graph(new), {})
    assert all(type(change.kind) is DiffKind for change in result.tasks.values())
    data = json.loads(result.to_text())
    assert data["summary"] == {
        "added": 1, "removed": 0, "moved": 0, "changed": 0, "renamed": 0, "unchanged": 4,
    }  # fmt: skip
    assert {row["kind"] for row in data["rows"]} == {"added", "unchanged"}


SETTINGS_BASE = (
    "name: flow\ndescription: first\non_failure: stop\npayload: {a: 1, b: [1, 2]}\n"
    "tasks:\n  t: {run: builtin:echo}\n"
)


@pytest.mark.parametrize(
    ("change", "expected_line", "changes_run"),
    [
        (("on_failure: stop", "on_failure: continue"),
         '~ workflow on_failure: "stop" -> "continue"', True),
        (("description: first", "description: second"),
         '~ workflow description: "first" -> "second"', False),
        (("payload: {a: 1, b: [1, 2]}", "payload: {a: 1, b: [1, 3]}"),
         "~ payload $.b[1]: 2 -> 3", True),
        (("payload: {a: 1, b: [1, 2]}", "payload: {b: [1, 2], c: true}"),
         "+ payload $.c: true", True),
    ],
)  # fmt: skip
def test_workflow_level_and_payload_changes_are_shown_and_gate_ci(
    tmp_path: Path, change: tuple[str, str], expected_line: str, changes_run: bool
) -> None:
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    old.write_text(SETTINGS_BASE)
    new.write_text(SETTINGS_BASE.replace(*change))
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--exit-code"])
    assert expected_line in result.stdout
    assert result.exit_code == (1 if changes_run else 0)
    document = json.loads(CliRunner().invoke(cli, ["diff", str(old), str(new), "--json"]).stdout)
    assert document["changes_run"] is changes_run and document["identical"] is False


def test_json_changes_compare_by_canonical_text() -> None:
    from harness_tui.engine.diff import json_changes

    assert json_changes({"x": 1}, {"x": True}) == [{"path": "$.x", "old": 1, "new": True}]
    assert json_changes([1, 2], [1, 2, 3]) == [{"path": "$", "old": [1, 2], "new": [1, 2, 3]}]
    assert json_changes({"a b": 1}, {}) == [{"path": "$['a b']", "removed": 1}]
    assert json_changes({"x": [1]}, {"x": [1]}) == []


@pytest.mark.parametrize("payload", [{"n": 1}, {"n": 2}])
def test_one_graph_diffed_with_itself_is_the_diff_of_two_equal_graphs(payload: Any) -> None:
    workflow = ROOT / "workflows/agent_triage.yaml"
    one, other = load_workflow(workflow).graph, load_workflow(workflow).graph
    shared = plan_diff(one, {"n": 1}, one, payload)  # the same object: the shortcut if alike
    apart = plan_diff(one, {"n": 1}, other, payload)
    assert shared.to_json() == apart.to_json()


def test_a_piped_plan_diff_is_a_tab_separated_line_per_task() -> None:
    v1, v2 = str(ROOT / "workflows/release_v1.yaml"), str(ROOT / "workflows/release_v2.yaml")
    result = CliRunner().invoke(cli, ["diff", v1, v2])
    rows = plan_diff(
        load_workflow(v1).graph, load_workflow(v1).payload,
        load_workflow(v2).graph, load_workflow(v2).payload,
    ).rows  # fmt: skip
    lines = result.stdout.splitlines()
    assert lines[0] == f"\t{v1}\t\t{v2}"
    for row, line in zip(rows, lines[1 : 1 + len(rows)], strict=True):
        marker, old, again, new = line.split("\t")
        assert marker == again == MARKERS[row.kind]
        assert (old.split()[1] if old else None) == (row.old.task if row.old else None)
        assert (new.split()[1] if new else None) == (row.new.task if row.new else None)
    assert lines[1 + len(rows)].startswith("~ ")  # the field changes follow
