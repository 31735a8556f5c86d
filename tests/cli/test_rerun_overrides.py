"""``rerun`` with what-if overrides, without a model server: bad overrides are one line and
exit 2; a recorded ``io.call`` answer edited offline; the fork's overrides kept in the store,
redacted in a redacted export, and inside the checksum (issue 35)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_tui.records.export import RunRecord
from harness_tui.records.export.overrides import Override, parse_override
from tests.conftest import calls_of, invoke

MODULE = "whatif_dice"
TASKS = """\
import random

CALLS = []


def roll(inputs):
    CALLS.append("roll")
    return {"dice": inputs["io"].call("dice", random.random), "n": inputs["params"]["n"]}


def other(inputs):
    CALLS.append("other")
    return "other"


def total(inputs):
    CALLS.append("total")
    results = inputs["context"]["results"]
    return {"score": results["roll"]["dice"] * results["roll"]["n"], "other": results["other"]}
"""
WORKFLOW = f"""\
name: dice
tasks:
  roll: {{run: '{MODULE}:roll', with: {{n: 2}}}}
  other: {{run: '{MODULE}:other'}}
  total: {{run: '{MODULE}:total', depends_on: [roll, other]}}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / f"{MODULE}.py").write_text(TASKS, encoding="utf-8")
    (tmp_path / "dice.yaml").write_text(WORKFLOW, encoding="utf-8")
    sys.modules.pop(MODULE, None)
    code, _, err = harness("run", str(tmp_path / "dice.yaml"), "--record", "--no-store", "-q",
                           "--export", str(tmp_path / "run.json"))  # fmt: skip
    assert code == 0, err
    calls()
    yield tmp_path
    sys.modules.pop(MODULE, None)


def calls() -> list[str]:
    return sorted(calls_of(MODULE))


harness = invoke


@pytest.mark.parametrize(
    ("option", "text", "line"),
    [
        ("--set-output", "roll", "error: --set-output 'roll': expected TASK=JSON|@FILE"),
        ("--set-output", "nope=1", "error: --set-output nope: no task 'nope' in workflow 'dice'"),
        ("--set-output", "roll={", "error: --set-output roll: not JSON: Expecting property name"),
        ("--set-output", "roll=[1, NaN]",
         "error: --set-output roll: value[1]: float is not a JSON value"),
        ("--set-answer", "roll#1=1", "error: --set-answer 'roll#1=1': expected TASK#ATTEMPT:N="),
        ("--set-answer", "roll#1:3=1",
         "error: --set-answer roll#1:3: attempt 1 of roll recorded 1 exchange"),
        ("--set-answer", "roll#2:1=1",
         "error: --set-answer roll#2:1: attempt 2 of roll recorded 0 exchanges"),
        ("--set-answer", "roll#0:1=1", "error: --set-answer roll: attempts and exchanges count"),
        ("--with", "roll.m=3", "error: --with roll.m: task roll has no parameter 'm' (it has: n)"),
        ("--with", "roll=3", "error: --with 'roll=3': expected TASK.PARAM=JSON|@FILE"),
    ],
)  # fmt: skip
def test_a_bad_override_is_one_line_and_exit_2(
    folder: Path, option: str, text: str, line: str
) -> None:
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store", option, text)
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith(line), err
    assert calls() == []


def test_two_overrides_that_contradict_are_refused(folder: Path) -> None:
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store",
                           "--set-output", "roll=1", "--set-answer", "roll#1:1=0.5")  # fmt: skip
    assert code == 2
    assert "already means the task is not called" in err
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store",
                           "--set-output", "roll=1", "--set-output", "roll=2")  # fmt: skip
    assert (code, err) == (2, "error: --set-output roll is given twice\n")


def test_without_from_or_an_override_it_says_what_to_give(folder: Path) -> None:
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store")
    assert code == 2
    assert err == "error: give --from TASK, or an override: --set-output, --set-answer or --with\n"


def test_an_edited_call_answer_re_runs_its_task_offline_and_keeps_the_rest(folder: Path) -> None:
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store", "-q",
                           "--set-answer", "roll#1:1=0.25",
                           "--export", str(folder / "fork.json"))  # fmt: skip
    assert code == 0, err
    assert calls() == ["roll", "total"]  # other kept from the record
    fork = RunRecord.read(folder / "fork.json")
    assert fork.results["total"] == {"score": 0.5, "other": "other"}
    (edited,) = fork.recordings[("roll", 1)]
    assert edited.value == 0.25
    code, out, err = harness("verify", str(folder / "dice.yaml"), "--against",
                             str(folder / "fork.json"), "--offline")  # fmt: skip
    assert code == 0, out + err


def test_overrides_combine_and_one_below_another_applies_as_written(folder: Path) -> None:
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store",
                           "--with", "roll.n=10", "--set-output", 'total="fixed"',
                           "--export", str(folder / "fork.json"))  # fmt: skip
    assert code == 0, err
    assert calls() == ["roll"]
    assert "re-running from roll, total: kept 1 task from the record (other)" in err
    fork = RunRecord.read(folder / "fork.json")
    assert fork.results["roll"]["n"] == 10 and fork.results["total"] == "fixed"
    kinds = [(o["kind"], o["task"]) for o in fork.document["forked_from"]["overrides"]]
    assert kinds == [("output", "total"), ("with", "roll")]


def test_the_store_keeps_the_overrides_and_a_redacted_export_hides_their_values(
    folder: Path,
) -> None:
    store = str(folder / "runs.db")
    code, _, err = harness("rerun", str(folder / "run.json"), "--store", store,
                           "--set-output", 'other={"token": "s3cr3t-value"}')  # fmt: skip
    assert code == 0, err
    run_id = next(line.split()[-1] for line in err.splitlines() if line.startswith("run id:"))
    harness("export", run_id, str(folder / "stored.json"), "--store", store)
    stored = RunRecord.read(folder / "stored.json")
    assert stored.document["format_version"] == "1.3"
    assert stored.document["forked_from"]["overrides"] == [
        {"task": "other", "kind": "output", "value": {"token": "s3cr3t-value"}}
    ]
    code, _, err = harness("export", run_id, str(folder / "red.json"), "--store", store,
                           "--redact", "token")  # fmt: skip
    assert code == 0, err
    text = (folder / "red.json").read_text(encoding="utf-8")
    assert "s3cr3t-value" not in text
    red = RunRecord.read(folder / "red.json")
    assert red.document["forked_from"]["overrides"][0]["value"] == "<redacted>"
    code, _, err = harness("verify", str(folder / "dice.yaml"), "--against",
                             str(folder / "red.json"), "--offline")  # fmt: skip
    assert code == 2
    assert "override values were redacted (--set-output other): reproducing it needs them" in err


def test_an_override_is_inside_the_checksum(folder: Path) -> None:
    harness("rerun", str(folder / "run.json"), "--no-store", "-q", "--set-output", "roll=1",
            "--export", str(folder / "fork.json"))  # fmt: skip
    document = json.loads((folder / "fork.json").read_text(encoding="utf-8"))
    document["forked_from"]["overrides"][0]["value"] = 2
    (folder / "fork.json").write_text(json.dumps(document), encoding="utf-8")
    code, _, err = harness("verify", str(folder / "dice.yaml"), "--against",
                           str(folder / "fork.json"))  # fmt: skip
    assert code == 2 and "checksum mismatch" in err


def test_an_override_round_trips_through_json() -> None:
    typed = parse_override("answer", 'ask#2:3={"a": [1, "=#:"]}')
    assert typed == Override("answer", "ask", {"a": [1, "=#:"]}, attempt=2, index=3)
    assert Override.from_json(typed.to_json()) == typed
    assert parse_override("with", 'ask.style.x="a=b"').param == "style.x"


def test_a_fork_re_run_again_keeps_its_overrides_unless_replaced(folder: Path) -> None:
    harness("rerun", str(folder / "run.json"), "--no-store", "-q", "--set-output", 'total="fixed"',
            "--export", str(folder / "fork.json"))  # fmt: skip
    calls()
    code, _, err = harness("rerun", str(folder / "fork.json"), "--no-store", "--with", "roll.n=3",
                           "--export", str(folder / "again.json"))  # fmt: skip
    assert code == 0, err
    assert "override: --set-output total (the record's, still applied)" in err
    assert calls() == ["roll"]  # total is below roll, and still set
    again = RunRecord.read(folder / "again.json")
    assert again.results["total"] == "fixed" and again.results["roll"]["n"] == 3
    assert [o["kind"] for o in again.document["forked_from"]["overrides"]] == ["output", "with"]
    code, out, err = harness("verify", str(folder / "dice.yaml"), "--against",
                             str(folder / "again.json"), "--offline")  # fmt: skip
    assert code == 0, out + err
    assert calls() == ["other", "roll"]  # every task but the one whose output is set
    code, _, err = harness("rerun", str(folder / "again.json"), "--no-store", "-q",
                           "--from", "total", "--export", str(folder / "code.json"))  # fmt: skip
    assert code == 0, err
    assert calls() == ["total"]  # --from total: its code runs again
    code_fork = RunRecord.read(folder / "code.json")
    assert code_fork.results["total"]["score"] == code_fork.results["roll"]["dice"] * 3
    assert [o["kind"] for o in code_fork.document["forked_from"]["overrides"]] == ["with"]


def test_the_same_what_if_twice_gives_the_same_digests(folder: Path) -> None:
    for name in ("one.json", "two.json"):
        code, _, err = harness("rerun", str(folder / "run.json"), "--no-store", "-q",
                               "--set-answer", "roll#1:1=0.5", "--with", "roll.n=4",
                               "--export", str(folder / name))  # fmt: skip
        assert code == 0, err
    one, two = RunRecord.read(folder / "one.json"), RunRecord.read(folder / "two.json")
    assert one.digests == two.digests
    assert one.document["forked_from"] == two.document["forked_from"]


def test_an_isolated_task_whose_output_is_set_is_not_sent_to_a_child(tmp_path: Path) -> None:
    (tmp_path / "whatif_iso.py").write_text(
        "import pathlib\n"
        "def mark(inputs):\n"
        "    pathlib.Path(inputs['payload']['marker']).write_text('called')\n"
        "    return 'called'\n"
        "def after(inputs):\n"
        "    return inputs['context']['results']['mark'] + '!'\n",
        encoding="utf-8",
    )
    marker = tmp_path / "called.txt"
    (tmp_path / "iso.yaml").write_text(
        f"name: iso\npayload: {{marker: '{marker}'}}\ntasks:\n"
        "  mark: {run: 'whatif_iso:mark', isolation: process}\n"
        "  after: {run: 'whatif_iso:after', depends_on: [mark]}\n",
        encoding="utf-8",
    )
    code, _, err = harness("run", str(tmp_path / "iso.yaml"), "--no-store", "-q",
                           "--export", str(tmp_path / "run.json"))  # fmt: skip
    assert code == 0, err
    marker.unlink()
    code, _, err = harness("rerun", str(tmp_path / "run.json"), "--no-store", "-q",
                           "--set-output", 'mark="set"',
                           "--export", str(tmp_path / "fork.json"))  # fmt: skip
    assert code == 0, err
    code, out, err = harness("verify", str(tmp_path / "iso.yaml"), "--against",
                             str(tmp_path / "fork.json"))  # fmt: skip
    assert code == 0, out + err
    assert not marker.exists()  # neither the re-run nor verify called it, here or in a child


def test_the_report_of_a_fork_says_what_the_user_changed(folder: Path) -> None:
    harness("rerun", str(folder / "run.json"), "--no-store", "-q", "--set-answer", "roll#1:1=0.5",
            "--export", str(folder / "fork.json"))  # fmt: skip
    code, out, err = harness("report", str(folder / "fork.json"))
    assert code == 0, err
    parent = RunRecord.read(folder / "run.json").digests["run"][:12]
    expected = f"What-if re-run of run {parent}: roll: recorded answer 1 of attempt 1 edited"
    assert expected in out
    code, _, err = harness("report", str(folder / "fork.json"), "--format", "html",
                           "-o", str(folder / "fork.html"))  # fmt: skip
    assert code == 0, err
    assert expected in (folder / "fork.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ({"task": "roll", "kind": "answer", "value": 1}, "names its attempt and exchange"),
        ({"task": "roll", "kind": "with", "value": 1}, "names its parameter"),
        ({"task": "roll", "kind": "nope", "value": 1}, "invalid export at forked_from"),
        ({"task": "roll", "kind": "output", "value": [[[[[[[[1]]]]]]]]}, "nested more than"),
    ],
)
def test_a_damaged_override_in_an_export_is_one_line(
    folder: Path, damage: dict[str, object], says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_tui.records.export.writing import checksum
    from harness_tui.workflow import limits

    harness("rerun", str(folder / "run.json"), "--no-store", "-q", "--set-output", "roll=1",
            "--export", str(folder / "fork.json"))  # fmt: skip
    document = json.loads((folder / "fork.json").read_text(encoding="utf-8"))
    document["forked_from"]["overrides"] = [damage]
    document["checksum"] = checksum(document)
    (folder / "bad.json").write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setenv(limits.ENV_VAR, "export_depth=8")
    code, _, err = harness("rerun", str(folder / "bad.json"), "--no-store", "--from", "total")
    assert code == 2 and len(err.splitlines()) == 1 and says in err, err


def _forged_fork(folder: Path, overrides: list[dict[str, object]]) -> Path:
    """A fork of ``run.json`` whose export holds ``overrides``, checksum made good again."""
    from harness_tui.records.export.writing import checksum

    harness("rerun", str(folder / "run.json"), "--no-store", "-q", "--set-answer", "roll#1:1=0.5",
            "--export", str(folder / "fork.json"))  # fmt: skip
    document = json.loads((folder / "fork.json").read_text(encoding="utf-8"))
    document["forked_from"]["overrides"] = overrides
    document["checksum"] = checksum(document)
    (folder / "forged.json").write_text(json.dumps(document), encoding="utf-8")
    calls()
    return folder / "forged.json"


@pytest.mark.parametrize(
    ("option", "text", "says"),
    [
        ("--set-output", "other=" + "[" * 195 + "]" * 195, "nested more than 194 levels deep"),
        ("--with", "roll.n=" + "[" * 195 + "]" * 195, "nested more than 194 levels deep"),
        ("--set-answer", "roll#1:1=" + "7" * 1100, "an integer of more than 1,000 digits"),
        ("--set-answer", f"roll#{'9' * 5000}:1=1", "no attempt or exchange has a number that"),
    ],
    ids=["deep-output", "deep-with", "long-integer", "long-attempt"],
)  # fmt: skip
def test_an_override_an_export_could_not_hold_is_one_line(
    folder: Path, option: str, text: str, says: str
) -> None:
    # Before: a value nested past the export reader's depth was exported unreadable (or, a
    # little deeper, copied into a RecursionError), and 5,000 digits of attempt a traceback.
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store", "-q", option, text,
                           "--export", str(folder / "fork.json"))  # fmt: skip
    assert code == 2 and len(err.splitlines()) == 1 and says in err, err
    assert not (folder / "fork.json").exists()


def test_the_deepest_override_an_export_holds_is_read_back(folder: Path) -> None:
    deepest = "[" * 194 + "]" * 194
    code, _, err = harness("rerun", str(folder / "run.json"), "--no-store", "-q",
                           "--set-output", f"other={deepest}",
                           "--export", str(folder / "fork.json"))  # fmt: skip
    assert code == 0, err
    assert RunRecord.read(folder / "fork.json").document["forked_from"]["overrides"]


@pytest.mark.parametrize(
    ("overrides", "options", "says"),
    [
        ([{"task": "nope", "kind": "with", "param": "n", "value": 1, "patch": []}], [],
         "forged.json: an override cannot apply: --with nope.n: no task 'nope' in workflow"),
        ([{"task": "roll", "kind": "output", "value": 1}] * 2, [],
         "forged.json: an override cannot apply: --set-output roll is given twice"),
        ([{"task": "roll", "kind": "answer", "attempt": 1, "exchange": 9, "value": 1}], [],
         "forged.json: an override cannot apply: --set-answer roll#1:9: attempt 1 of roll "
         "recorded 1 exchange"),
        ([{"task": "roll", "kind": "answer", "attempt": 1, "exchange": 1, "value": 1}],
         ["--calls", "live"], "forged.json edits a recorded answer (--set-answer roll#1:1); "
         "live calls answer none"),
    ],
)  # fmt: skip
def test_verify_against_a_fork_whose_overrides_cannot_apply_is_one_line(
    folder: Path, overrides: list[dict[str, object]], options: list[str], says: str
) -> None:
    # Before: a with: override of an unknown task was a KeyError traceback, and an edited
    # answer under live calls was dropped without a word (a divergence blamed on the user).
    forged = _forged_fork(folder, overrides)
    code, _, err = harness("verify", str(folder / "dice.yaml"), "--against", str(forged),
                           *options)  # fmt: skip
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith(f"error: {forged}"), err
    assert says.removeprefix("forged.json") in err
    assert calls() == []


@pytest.mark.parametrize(
    "tasks",
    [
        "  a: {run: 'builtin:echo', with: &w {n: 1}}\n  b: {run: 'builtin:echo', with: *w}\n",
        "  a: &spec {run: 'builtin:echo', with: {n: 1}}\n  b: *spec\n",
    ],
    ids=["shared-with", "shared-task"],
)
def test_a_with_override_sets_one_task_even_where_yaml_aliases_share_it(tasks: str) -> None:
    # Before: --with a.n also set b's n (one mapping behind both), so the fork's workflow
    # gave b, kept from the record with n 1, another parameter; verify then diverged on b.
    from harness_tui.records.runs.whatif import patch_workflow
    from harness_tui.workflow.loader import parse_workflow

    workflow = parse_workflow(f"name: shared\ntasks:\n{tasks}")
    override = parse_override("with", "a.n=5")
    patched, _ = patch_workflow(workflow, [override], None)
    assert dict(patched.graph.nodes["a"].params) == {"n": 5}
    assert dict(patched.graph.nodes["b"].params) == {"n": 1}
