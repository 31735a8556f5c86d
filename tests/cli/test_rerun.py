"""`harness-tui rerun`: a recorded run re-run from a task; the tasks it keeps are not executed
again, and a fork whose outputs equal a fresh run's has its digest (issue 13)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import calls_of, invoke

MODULE = "rerun_tasks"
TASKS = """\
import os
CALLS = []
def fetch(inputs):
    CALLS.append("fetch"); return {"rows": 3}
def transform(inputs):
    CALLS.append("transform")
    if not os.environ.get("FIXED"):
        raise ValueError("bad row")
    return {"rows": inputs["context"]["results"]["fetch"]["rows"] * 2}
def side(inputs):
    CALLS.append("side"); return "side"
def load(inputs):
    CALLS.append("load"); return inputs["context"]["results"]["transform"]
"""
WORKFLOW = f"""\
name: fk
on_failure: ON_FAILURE
tasks:
  fetch: {{run: '{MODULE}:fetch'}}
  side: {{run: '{MODULE}:side', depends_on: [fetch], with: {{n: 1}}}}
  transform: {{run: '{MODULE}:transform', depends_on: [fetch]}}
  load: {{run: '{MODULE}:load', depends_on: [transform, side]}}
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / f"{MODULE}.py").write_text(TASKS)
    (tmp_path / "fk.yaml").write_text(WORKFLOW.replace("ON_FAILURE", "stop"))
    monkeypatch.delenv("FIXED", raising=False)
    sys.modules.pop(MODULE, None)
    yield tmp_path
    sys.modules.pop(MODULE, None)


def calls() -> list[str]:
    """The task calls since the last look (the module is imported once per test)."""
    return calls_of(MODULE)


harness = invoke


def record(folder: Path, name: str = "bad.json", *extra: str) -> Path:
    target = folder / name
    code, _, err = harness("run", str(folder / "fk.yaml"), "--no-store", "-q", "--export",
                           str(target), *extra)  # fmt: skip
    assert code in (0, 1), err
    return target


def test_rerun_after_a_fix_runs_only_the_task_and_its_descendants(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = record(folder)
    assert calls() == ["fetch", "side", "transform"]
    monkeypatch.setenv("FIXED", "1")
    fixed = folder / "fixed.json"
    code, _, err = harness("rerun", str(bad), "--from", "transform", "--no-store",
                           "--export", str(fixed))  # fmt: skip
    assert code == 0, err
    assert "re-running from transform: kept 2 tasks from the record (fetch, side)" in err
    assert calls() == ["transform", "load"]  # fetch and side were not executed again
    fresh = record(folder, "fresh.json")
    calls()
    forked, clean = json.loads(fixed.read_text()), json.loads(fresh.read_text())
    assert forked["digests"] == clean["digests"]  # outside every digest: forked_from
    assert forked["forked_from"] == {
        "run_digest": json.loads(bad.read_text())["digests"]["run"],
        "task": "transform",
    }
    assert clean["forked_from"] is None


def test_rerun_of_a_middle_task_in_continue_mode(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "fk.yaml").write_text(WORKFLOW.replace("ON_FAILURE", "continue"))
    bad = record(folder)
    assert calls() == ["fetch", "side", "transform"]  # load: upstream_failed, not called
    monkeypatch.setenv("FIXED", "1")
    code, _, err = harness("rerun", str(bad), "--from", "side", "--no-store", "-q")
    # side and load run again; transform is kept as it failed, so load is upstream_failed.
    assert code == 1, err
    assert calls() == ["side"]


def test_a_stored_run_reruns_by_its_id(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = str(folder / "runs.sqlite3")
    code, _, err = harness("run", str(folder / "fk.yaml"), "--store", store)
    assert code == 1
    run_id = next(line.split()[-1] for line in err.splitlines() if line.startswith("run id:"))
    calls()
    monkeypatch.setenv("FIXED", "1")
    code, _, err = harness("rerun", run_id, "--from", "transform", "--store", store)
    assert code == 0, err
    assert calls() == ["transform", "load"]
    fork_id = next(line.split()[-1] for line in err.splitlines() if line.startswith("run id:"))
    exported = folder / "fork.json"
    assert harness("export", fork_id, str(exported), "--store", store)[0] == 0
    # The store keeps what the fork came from, so its export says it too.
    assert json.loads(exported.read_text())["forked_from"]["task"] == "transform"


@pytest.mark.parametrize(
    ("args", "edit", "message"),
    [
        (["--from", "nope"], None, "no task 'nope' in workflow 'fk'"),
        (["--from", "transform", "--payload", "{}"], None,
         "--payload: a re-run uses the record's payload"),
        (["--from", "transform", "--workflow", "NEW"], ("n: 1", "n: 2"),
         "side would be kept from the record but its with.n changed; re-run from side or an "
         "ancestor of it (not transform)"),
        (["--from", "transform", "--workflow", "NEW"], ("[fetch], with", "[], with"),
         "side would be kept from the record but its depends_on changed"),
    ],
    ids=["unknown-task", "payload", "kept-spec-changed", "kept-deps-changed"],
)  # fmt: skip
def test_what_a_rerun_refuses_is_one_line(
    folder: Path, args: list[str], edit: tuple[str, str] | None, message: str
) -> None:
    bad = record(folder)
    new = folder / "new.yaml"
    new.write_text(WORKFLOW.replace("ON_FAILURE", "stop").replace(*(edit or ("", ""))))
    args = [str(new) if a == "NEW" else a for a in args]
    code, _, err = harness("rerun", str(bad), *args, "--no-store")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert message in line
    calls()


def test_a_changed_descendant_is_fine_and_runs_the_new_code(folder: Path) -> None:
    bad = record(folder)
    calls()
    new = folder / "new.yaml"
    new.write_text(WORKFLOW.replace("ON_FAILURE", "stop").replace(
        f"{{run: '{MODULE}:transform'", f"{{run: '{MODULE}:side'"))  # fmt: skip
    code, _, err = harness("rerun", str(bad), "--from", "transform", "--workflow", str(new),
                           "--no-store", "-q")  # fmt: skip
    assert code == 0, err
    assert calls() == ["side", "load"]  # transform now runs side's code


def test_rerun_finds_the_code_beside_the_export_from_any_folder(
    folder: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder)
    code, _, err = harness("run", "fk.yaml", "--no-store", "-q", "--export", "bad.json")
    assert code == 1, err
    sys.modules.pop(MODULE, None)  # imported again, from where the re-run finds it
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    monkeypatch.setenv("FIXED", "1")
    code, _, err = harness("rerun", str(folder / "bad.json"), "--from", "transform", "--no-store")
    assert code == 0, err
    assert f"task code from {folder}\n" in err
    assert calls() == ["transform", "load"]


def test_rerun_names_where_it_looked_for_the_code_and_takes_workflow(
    folder: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder)
    assert harness("run", "fk.yaml", "--no-store", "-q", "--export", "bad.json")[0] == 1
    sys.modules.pop(MODULE, None)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (folder / "bad.json").rename(elsewhere / "bad.json")
    monkeypatch.chdir(elsewhere)
    code, out, err = harness("rerun", "bad.json", "--from", "transform", "--no-store")
    assert (code, out) == (2, "")
    assert err == (
        f"error: cannot find module '{MODULE}' (task 'fetch'): looked next to the export and "
        f"in the recorded folder ({elsewhere}); give --workflow FILE to name the workflow "
        "whose folder holds it\n"
    )
    copy = elsewhere / "fk.yaml"
    copy.write_text((folder / "fk.yaml").read_text())
    code, _, err = harness("rerun", "bad.json", "--from", "transform", "--workflow", str(copy),
                           "--no-store")  # fmt: skip
    assert (code, err) == (2, f"error: cannot find module '{MODULE}' (task 'fetch'): looked in "
                              f"the folder of --workflow ({elsewhere}); put it beside that "
                              "workflow, or install it\n")  # fmt: skip
    workflow = str(folder / "fk.yaml")
    code, _, err = harness("rerun", "bad.json", "--from", "transform", "--workflow", workflow,
                           "--no-store")  # fmt: skip
    assert code == 1 and f"task code from {folder}\n" in err


def test_rerun_finds_the_code_in_the_recorded_folder(
    folder: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    bad = record(folder).rename(elsewhere / "bad.json")  # recorded with its absolute path
    sys.modules.pop(MODULE, None)
    monkeypatch.chdir(elsewhere)
    code, _, err = harness("rerun", str(bad), "--from", "transform", "--no-store")
    assert code == 1 and f"task code from {folder}\n" in err


def test_the_workbenchs_rerun_finds_the_code_beside_the_opened_export(
    folder: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_tui.tui.session import open_session

    monkeypatch.chdir(folder)
    assert harness("run", "fk.yaml", "--no-store", "-q", "--export", "bad.json")[0] == 1
    sys.modules.pop(MODULE, None)
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    monkeypatch.setenv("FIXED", "1")
    session = open_session(str(folder / "bad.json"))
    session.live.drive()  # the replay, stepped to its end (no code runs)
    fork = session.rerun_from("transform")  # F on the selected task
    assert fork.code_folder == folder
    session.live.drive()
    assert session.live.run.status.value == "succeeded"
    assert calls() == ["transform", "load"]
    again = session.rerun_from("load")  # the new run's record names no export: found again
    assert again.code_folder == folder
