"""Diffs of two runs tell the whole truth: aligned by task, renames paired, causes named;
`verify --against` the wrong export and a damaged golden file are one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.divergence import compare_records

BASE = """\
name: shop
payload: {region: eu}
tasks:
  fetch: {run: builtin:echo, with: {source: db}}
  lint: {run: builtin:echo, with: {strict: true}, depends_on: [fetch]}
  build: {run: builtin:merge, depends_on: [fetch, lint]}
  ship: {run: builtin:echo, with: {env: staging}, depends_on: [build]}
"""

RENAME = ("lint: {run: builtin:echo, with: {strict: true}, depends_on: [fetch]}\n"
          "  build: {run: builtin:merge, depends_on: [fetch, lint]}",
          "check: {run: builtin:echo, with: {strict: true}, depends_on: [fetch]}\n"
          "  build: {run: builtin:merge, depends_on: [fetch, check]}")  # fmt: skip

# BASE whose fetch reads the payload, and (READS_QUIET) whose lint has a parameter it ignores.
READS = BASE.replace("fetch: {run: builtin:echo, with: {source: db}}",
                     "fetch: {run: builtin:select, with: {expr: payload}}")  # fmt: skip
READS_QUIET = READS.replace(
    "lint: {run: builtin:echo, with: {strict: true}",
    "lint: {run: builtin:select, with: {expr: '{ok: `true`}', note: a}",
)
# ship reads fetch, not a dependency of it but an ancestor, and gate between says the same.
ANCESTOR_READ = """\
name: shop
tasks:
  fetch: {run: builtin:echo, with: {source: db}}
  gate: {run: builtin:select, with: {expr: '{ok: `true`}'}, depends_on: [fetch]}
  ship: {run: builtin:select, with: {expr: results.fetch}, depends_on: [gate]}
"""
PAYLOAD = ("payload: {region: eu}", "payload: {region: us}")
PAYLOAD_HEADER = (
    "workflows: 0 added, 0 removed, 0 moved, 0 changed, 4 task ids changed (the payload "
    "changed), payload: 1 value changed"
)
REGION = 'the payload changed: $.region: "eu" -> "us"'

# (name, edit of the base, expected lines of `diff old.json new.json` in order[, base])
CASES: list[tuple[str, tuple[str, str], list[str]] | tuple[str, tuple[str, str], list[str], str]]
CASES = [
    (
        # Every task reads the payload; fetch's output is the same in both runs, so it is not
        # what changed lint's, build's or ship's inputs: the payload is.
        "payload",
        PAYLOAD,
        [
            PAYLOAD_HEADER,
            f"first divergence: fetch: {REGION}",
            f"  lint: {REGION}",
            f"  build: {REGION}",
            f"  ship: {REGION}",
            "4 tasks differ",
        ],
    ),
    (
        # fetch returns the payload, so its output differs: that is lint's and build's cause;
        # lint's own output is the same, so build names fetch only.
        "payload-read-upstream",
        PAYLOAD,
        [
            PAYLOAD_HEADER,
            f'first divergence: fetch: {REGION} (output {{"region": "eu"}} -> {{"region": "us"}})',
            "  lint: upstream fetch differs",
            "  build: upstream fetch differs "
            '(output {"region": "eu", "strict": true} -> {"region": "us", "strict": true})',
            "  ship: upstream build differs",
            "4 tasks differ",
        ],
        READS,
    ),
    (
        # lint's ignored parameter changed: its inputs differ, its output does not, so build's
        # inputs differ only because digests chain, and so do ship's.
        "quiet-upstream",
        ("note: a", "note: b"),
        [
            "workflows: 0 added, 0 removed, 0 moved, 1 changed",
            'first divergence: lint: its own with.note: "a" -> "b"',
            "  build: nothing it reads differs: upstream lint had other inputs but the same "
            "outcome and output",
            "  ship: nothing it reads differs: upstream build had other inputs but the same "
            "outcome and output",
            "3 tasks differ",
        ],
        READS_QUIET,
    ),
    (
        "parameter",
        ("env: staging", "env: prod"),
        [
            "workflows: 0 added, 0 removed, 0 moved, 1 changed",
            'first divergence: ship: its own with.env: "staging" -> "prod" '
            '(output {"env": "staging"} -> {"env": "prod"})',
            "1 task differs",
        ],
    ),
    (
        "rename",
        RENAME,
        [
            "workflows: 0 added, 0 removed, 1 renamed, 0 moved, 0 changed, 1 task ids changed",
            "first divergence: check: renamed; same inputs, outcome and output (was lint)",
            "  build: upstream lint is now check",
            "  ship: nothing it reads differs: upstream build had other inputs but the same "
            "outcome and output",
            "3 tasks differ",
        ],
    ),
    (
        # ship's dependency gate has the same output, but ship reads fetch, an ancestor,
        # through context.results: that is its cause, not "nothing it reads differs".
        "ancestor-read",
        ("source: db", "source: api"),
        [
            "workflows: 0 added, 0 removed, 0 moved, 1 changed",
            'first divergence: fetch: its own with.source: "db" -> "api" '
            '(output {"source": "db"} -> {"source": "api"})',
            "  gate: upstream fetch differs",
            "  ship: ancestor fetch differs (read through context.results) "
            '(output {"source": "db"} -> {"source": "api"})',
            "3 tasks differ",
        ],
        ANCESTOR_READ,
    ),
    (
        "removed",
        ("  ship: {run: builtin:echo, with: {env: staging}, depends_on: [build]}\n", ""),
        [
            "workflows: 0 added, 1 removed, 0 moved, 0 changed",
            'first divergence: ship: only in the first run ("succeeded" -> null)',
            "1 task differs",
        ],
    ),
]


def export(tmp_path: Path, name: str, source: str) -> Path:
    workflow, target = tmp_path / f"{name}.yaml", tmp_path / f"{name}.json"
    workflow.write_text(source)
    result = CliRunner().invoke(
        cli, ["run", str(workflow), "--no-store", "-q", "--export", str(target)]
    )
    assert result.exit_code == 0, result.output
    return target


@pytest.mark.parametrize(
    ("name", "edit", "expected", "base"),
    [(*c[:3], c[3] if len(c) > 3 else BASE) for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_a_trace_diff_names_the_cause(
    tmp_path: Path, name: str, edit: tuple[str, str], expected: list[str], base: str
) -> None:
    assert edit[0] in base
    old = export(tmp_path, "old", base)
    new = export(tmp_path, "new", base.replace(*edit))
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--exit-code"])
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines() == expected


def test_a_large_output_that_differs_is_given_whole_not_as_null(tmp_path: Path) -> None:
    long = "x" * 300  # over the 200 characters past which an output once came back as None
    old = export(tmp_path, "old", BASE.replace("env: staging", f"env: {long}"))
    new = export(tmp_path, "new", BASE)
    (ship,) = compare_records(RunRecord.read(old), RunRecord.read(new)).tasks
    assert (ship.expected_value, ship.actual_value) == ({"env": long}, {"env": "staging"})
    assert "output null" not in ship.describe()


def test_a_rename_is_paired_not_removed_and_added(tmp_path: Path) -> None:
    old = export(tmp_path, "old", BASE)
    new = export(tmp_path, "new", BASE.replace(*RENAME).replace("strict: true", "strict: false"))
    found = compare_records(RunRecord.read(old), RunRecord.read(new)).tasks
    kinds = {d.task: (d.kind, d.renamed_from) for d in found}
    # A rename with a changed parameter is no longer provably a rename: remove + add.
    assert kinds["check"] == ("added", None) and kinds["lint"] == ("removed", None)
    plain = export(tmp_path, "plain", BASE.replace(*RENAME))
    found = compare_records(RunRecord.read(old), RunRecord.read(plain)).tasks
    first = found[0]
    assert (first.task, first.kind, first.renamed_from) == ("check", "renamed", "lint")


def test_identical_exports_agree_and_json_holds_plan_and_tasks(tmp_path: Path) -> None:
    old = export(tmp_path, "old", BASE)
    same = CliRunner().invoke(cli, ["diff", str(old), str(old), "--exit-code"])
    assert same.exit_code == 0 and same.stdout.startswith("traces agree task by task")
    new = export(tmp_path, "new", BASE.replace("env: staging", "env: prod"))
    document = json.loads(CliRunner().invoke(cli, ["diff", str(old), str(new), "--json"]).stdout)
    assert document["plan"]["changes_run"] is True
    (ship,) = document["tasks"]
    assert ship["task"] == "ship" and ship["kind"] == "inputs"
    assert ship["cause"] == 'its own with.env: "staging" -> "prod"'


def test_verify_against_another_workflows_export_is_one_line(tmp_path: Path) -> None:
    other = export(tmp_path, "other", "name: other\ntasks:\n  t: {run: builtin:echo}\n")
    workflow = tmp_path / "shop.yaml"
    workflow.write_text(BASE)
    result = CliRunner().invoke(cli, ["verify", str(workflow), "--against", str(other)])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith("records workflow 'other', not 'shop': they share no task, so there "
                         "is nothing to compare")  # fmt: skip


def test_verify_against_names_the_side_that_has_a_task(tmp_path: Path) -> None:
    record = export(tmp_path, "old", BASE)
    workflow = tmp_path / "shop.yaml"
    workflow.write_text(BASE.replace("  ship: {run: builtin:echo, with: {env: staging}, "
                                     "depends_on: [build]}\n", ""))  # fmt: skip
    result = CliRunner().invoke(cli, ["verify", str(workflow), "--against", str(record)])
    assert result.exit_code == 1
    assert result.stdout == (
        'diverges from the record: ship: only in the record ("succeeded" -> null)\n'
    )


def golden(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["golden", str(tmp_path / "shop.yaml"), *args])
    assert "Traceback" not in result.output
    return result.exit_code, (result.stdout + result.stderr).strip().splitlines()


def test_a_golden_mismatch_names_the_parameter(tmp_path: Path) -> None:
    workflow, pin = tmp_path / "shop.yaml", str(tmp_path / "golden.json")
    workflow.write_text(BASE)
    assert golden(tmp_path, pin, "--update")[0] == 0
    assert golden(tmp_path, pin) == (0, [f"ok: {workflow} matches {pin}"])
    workflow.write_text(BASE.replace("env: staging", "env: prod"))
    assert golden(tmp_path, pin) == (
        1,
        ['golden mismatch: ship: with.env: "staging" -> "prod"; then the trace differs from '
         "event 6 (task ship)"],
    )  # fmt: skip
    # A pin from before specs were kept still checks, naming the task where it diverges.
    document = json.loads(Path(pin).read_text())
    del document["spec"]
    Path(pin).write_text(json.dumps(document))
    code, (line,) = golden(tmp_path, pin)
    assert code == 1 and line.startswith("golden mismatch: event 6: ship: its inputs differ")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda text: text[: len(text) // 2], "not a golden file (not JSON: "),
        (lambda text: json.dumps({**json.loads(text), "trace": None} and
                                 {k: v for k, v in json.loads(text).items() if k != "trace"}),
         "not a golden file (it lacks trace)"),
        (lambda text: json.dumps({**json.loads(text), "spec": []}),
         "not a golden file (its spec is not a JSON object)"),
    ],
    ids=["truncated", "no-trace", "bad-spec"],
)  # fmt: skip
def test_a_damaged_golden_file_is_an_error_not_a_mismatch(
    tmp_path: Path, damage: object, message: str
) -> None:
    workflow, pin = tmp_path / "shop.yaml", tmp_path / "golden.json"
    workflow.write_text(BASE)
    assert golden(tmp_path, str(pin), "--update")[0] == 0
    assert callable(damage)
    pin.write_text(damage(pin.read_text()))
    code, (line,) = golden(tmp_path, str(pin))
    assert code == 2 and message in line and "--update" not in line


def test_a_golden_mismatch_after_a_code_change_says_the_output_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "golden_code.py"
    module.write_text("def make(inputs):\n    return {'size': 1}\n")
    (tmp_path / "shop.yaml").write_text(
        "name: shop\ntasks:\n  make: {run: golden_code:make}\n"
        "  ship: {run: builtin:merge, depends_on: [make]}\n"
    )
    pin = str(tmp_path / "golden.json")
    assert golden(tmp_path, pin, "--update")[0] == 0
    module.write_text("def make(inputs):\n    return {'size': 2}\n")
    monkeypatch.delitem(__import__("sys").modules, "golden_code", raising=False)
    code, (line,) = golden(tmp_path, pin)
    assert code == 1
    assert line == (
        "golden mismatch: event 1: make: same inputs and spec, another output than the golden "
        "file's: the task's code (or what it reads) changed since it was written "
        '(output {"size": 1} -> {"size": 2})'
    )
    assert "non-deterministic" not in line


def test_a_timeout_written_as_an_integer_is_the_same_spec(tmp_path: Path) -> None:
    from harness_tui.engine.graph import TaskNode
    from harness_tui.engine.spec import task_spec
    from harness_tui.workflow.loader import parse_workflow

    read = parse_workflow("name: t\ntasks:\n  a: {run: builtin:echo, timeout_seconds: 5}\n")
    written = TaskNode("a", ref="builtin:echo", timeout_seconds=5)
    assert json.dumps(task_spec(read.graph["a"])) == json.dumps(task_spec(written))


def test_the_python_user_profile_matches_the_yaml_ones_golden_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2] / "workflows")
    pin = str(tmp_path / "golden.json")
    runner = CliRunner()
    assert runner.invoke(cli, ["golden", "user_profile.yaml", pin, "--update"]).exit_code == 0
    result = runner.invoke(cli, ["golden", "user_profile.py:build_harness", pin])
    assert (result.exit_code, result.stdout) == (
        0,
        f"ok: user_profile.py:build_harness matches {pin}\n",
    )


def test_a_condition_written_in_python_reads_as_in_a_file() -> None:
    from harness_tui import HarnessError, TaskNode, condition
    from harness_tui.engine.spec import task_spec

    node = TaskNode("t", ref="builtin:echo", when=condition("payload.go"))
    assert task_spec(node)["when"] == "payload.go"
    assert node.when is not None and node.when({"payload": {"go": 1}, "results": {}})
    with pytest.raises(HarnessError, match="invalid JMESPath in 'when'"):
        condition("payload.[")


def test_two_stored_runs_diff_by_their_ids(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    runner = CliRunner()
    ids = []
    for payload in ('{"region": "eu"}', '{"region": "us"}'):
        workflow = tmp_path / "shop.yaml"
        workflow.write_text(BASE)
        ran = runner.invoke(
            cli, ["run", str(workflow), "--store", str(store), "--payload", payload]
        )
        assert ran.exit_code == 0, ran.output
        ids.append(ran.stderr.split("run id: ")[1].split()[0])
    result = runner.invoke(cli, ["diff", *ids, "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "first divergence: fetch" in result.stdout and "payload changed" in result.stdout
    same = runner.invoke(cli, ["diff", ids[0], ids[0], "--store", str(store)])
    assert same.exit_code == 0 and "traces agree" in same.stdout
    unknown = runner.invoke(cli, ["diff", ids[0], "20000101-000000-abcdef", "--store", str(store)])
    assert unknown.exit_code == 2 and unknown.stderr.count("\n") == 1


def test_a_trace_diff_compares_the_canonical_fields_of_an_event_at_once() -> None:
    from harness_tui.engine.events import Status, TraceEvent
    from harness_tui.records.runs import divergence

    assert TraceEvent._fields[divergence._SPAN] == divergence._FIELDS
    event = TraceEvent(0, "a", "id", Status.SUCCEEDED, 1, output_digest="x", started_at=1.0)
    timed = event._replace(started_at=2.0, wall=3.0, worker=1)  # timings never count
    assert divergence.trace_diff([event], [timed]).identical
    differs = divergence.trace_diff([event], [event._replace(output_digest="y")])
    assert differs.first is not None and differs.first.field == "output_digest"


def test_a_task_diff_of_traces_that_differ_only_in_timings_is_empty() -> None:
    from harness_tui.engine.events import Status, TraceEvent
    from harness_tui.records.runs.divergence import task_diff

    start = TraceEvent(0, "a", "id", Status.RUNNING, 1, input_digest="i", started_at=1.0)
    end = TraceEvent(1, "a", "id", Status.SUCCEEDED, 1, output_digest="o", ended_at=2.0)
    later = [start._replace(started_at=5.0, worker=1), end._replace(ended_at=9.0, wall=3.0)]
    assert task_diff([start, end], later) == []
    other = task_diff([start, end], [start, end._replace(output_digest="p")])
    assert [(d.task, d.kind) for d in other] == [("a", "output")]
    shorter = task_diff([start, end], [start])
    assert [(d.task, d.kind) for d in shorter] == [("a", "status")]
