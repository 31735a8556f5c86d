"""A workflow defined in Python (``file.py:factory``) opens in every command and the workbench,
and its export replays where its module cannot be imported (issue 23)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness_tui
from harness_tui import Harness, HarnessError
from harness_tui.cli import cli
from harness_tui.engine.clock import FakeClock
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui.app import create_app

ROOT = Path(__file__).resolve().parents[2]
PY_DEMO = str(ROOT / "workflows/user_profile.py") + ":build_harness"
YAML_DEMO = str(ROOT / "workflows/user_profile.yaml")


def harness(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


def test_the_python_demo_has_the_yaml_demos_plan_and_results(tmp_path: Path) -> None:
    plans = [json.loads(harness("plan", demo, "--json")[1]) for demo in (PY_DEMO, YAML_DEMO)]
    assert plans[0] == plans[1]
    exports = []
    for name, demo in (("py", PY_DEMO), ("yaml", YAML_DEMO)):
        target = tmp_path / f"{name}.json"
        code, _, err = harness("run", demo, "--no-store", "-q", "--export", str(target))
        assert code == 0, err
        exports.append(json.loads(target.read_text()))
    assert exports[0]["digests"] == exports[1]["digests"]
    spec = exports[0]["spec"]
    assert spec["format"] == "harness-spec/1" and len(spec["module_digest"]) == 64
    assert spec["tasks"]["check_quota"]["run"] == "python:tasks.user_profile:check_quota"
    assert spec["tasks"]["check_quota"]["when"] == "payload.user_id != 'anonymous'"
    assert exports[1]["spec"] is None
    assert harness("validate", PY_DEMO)[1] == f"ok: {PY_DEMO} (4 tasks)\n"


WHEN_TASKS = """\
from harness_tui import Harness
PAYLOAD = {"mode": "quick"}
ON_FAILURE = "continue"
def build():
    h = Harness()
    h.register("a", lambda i: {"mode": i["payload"]["mode"]})
    h.register("slow_path", lambda i: 1, depends_on=["a"],
               when=lambda s: s["payload"]["mode"] == "full")
    h.register("flaky", lambda i: 1 / 0, depends_on=["a"], max_retries=1)
    return h
"""


@pytest.fixture
def when_module(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "when_wf.py").write_text(WHEN_TASKS)
    sys.modules.pop("when_wf", None)
    yield tmp_path / "when_wf.py"
    sys.modules.pop("when_wf", None)


def test_an_export_replays_and_diffs_where_the_module_cannot_be_imported(
    when_module: Path, tmp_path: Path
) -> None:
    export = tmp_path / "run.json"
    code, _, err = harness("run", f"{when_module}:build", "--no-store", "-q", "--export",
                           str(export))  # fmt: skip
    assert code == 1, err  # flaky fails; on_failure: continue from the module
    record = RunRecord.read(export)
    statuses = {e.task: e.status.value for e in record.events}
    assert statuses == {"a": "succeeded", "slow_path": "skipped", "flaky": "failed"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.replace(export, elsewhere / "run.json")
    when_module.unlink()  # nothing left to import, even by accident
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    expected = {
        "replay": "replayed 7 events of when_wf: identical (plan, trace and digests)",
        "diff": "traces agree task by task (7 and 7 events)",
    }
    for command, line in expected.items():
        extra = ["run.json"] if command == "diff" else []
        done = subprocess.run(
            [sys.executable, "-m", "harness_tui", command, "run.json", *extra],
            cwd=elsewhere, capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(line), done.stdout


GRAPH = (
    "from harness_tui import Harness\n"
    "def build():\n"
    "    harness = Harness()\n"
    "    harness.register('a', lambda inputs: 1)\n"
    "    return harness\n"
)


@pytest.mark.parametrize(
    ("module", "ref", "message"),
    [
        (None, "missing.py:build", "no such file: "),
        ("x = 1\n", "mod.py:build", "has no attribute 'build'"),
        ("def build(:\n", "mod.py:build", "mod.py:1:11: SyntaxError: invalid syntax"),
        ("raise SystemExit(3)\n", "mod.py:build", "importing "),
        ("def build():\n    raise ValueError('no db')\n", "mod.py:build",
         "build() failed: ValueError: no db"),
        ("def build():\n    return 42\n", "mod.py:build", "build gave 'int', not a Harness"),
        ("def build():\n    return 42\n", "mod.py:build@HEAD",
         "cannot be read at a git revision"),
        (GRAPH + "ON_FAILURE = 'explode'\n", "mod.py:build",
         "ON_FAILURE must be one of 'stop', 'continue', not 'explode'"),
        (GRAPH + "class Bad:\n    def __str__(self):\n        raise ValueError\nNAME = Bad()\n",
         "mod.py:build", "NAME must be a string, not 'Bad'"),
        (GRAPH + "def __getattr__(name):\n    raise RuntimeError('no ' + name)\n",
         "mod.py:build", "reading ON_FAILURE failed: RuntimeError: no ON_FAILURE"),
        ("def __getattr__(name):\n    raise RuntimeError('no ' + name)\n", "mod.py:build",
         "reading build failed: RuntimeError: no build"),
        ("class Odd(BaseException):\n    def __str__(self):\n        raise SystemExit\n"
         "def build():\n    raise Odd()\n", "mod.py:build",
         "build() failed: Odd: <str() of the exception raised SystemExit>"),
        (GRAPH + "PAYLOAD = {'x': 'y' * 8 * 1024 * 1024}\n", "mod.py:build",
         "PAYLOAD: 8,388,616 bytes as JSON; the limit is 1,048,576"),
    ],
    ids=["missing", "no-attribute", "syntax", "exit", "raises", "not-a-harness", "revision",
         "on-failure", "name-str-raises", "module-getattr-raises",
         "factory-getattr-raises", "unprintable-base-exception", "payload-over-cap"],
)  # fmt: skip
def test_a_broken_python_workflow_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str | None, ref: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if module is not None:
        (tmp_path / "mod.py").write_text(module)
    sys.modules.pop("mod", None)
    for command in ("validate", "plan", "run"):
        code, _, err = harness(command, ref)
        assert code == 2, (command, err)
        (line,) = err.strip().splitlines()
        assert message in line, line
    sys.modules.pop("mod", None)


async def test_the_workbench_steps_a_python_defined_harness() -> None:
    app = create_app(PY_DEMO, settings=RunSettings(clock=FakeClock()))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(4):
            await pilot.press("n")
            await app.workers.wait_for_complete()
            await pilot.pause()
        session = app.session
        assert session is not None and session.run.status.value == "succeeded"
        record = session.export_record()
        assert record.document["spec"]["name"] == "user_profile"
        assert record.results["compose_response"]["final"]["quota"] == 100


def test_debug_runs_headless_and_refuses_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = Harness()
    h.register("hello", lambda i: {"hi": i["payload"]["who"]})
    run = harness_tui.debug(h, {"who": "you"}, headless=True)
    assert json.loads(run.output_texts()["hello"]) == {"hi": "you"}
    assert run.status.value == "succeeded"
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    with pytest.raises(HarnessError, match="no terminal to open the workbench in"):
        harness_tui.debug(h, {"who": "you"})


def test_debug_opens_the_workbench_and_returns_the_partial_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Quit early, the run comes back stopped (``cancelled``, the tasks not run recorded so,
    their code never run), never as still ``running``."""
    from harness_tui.tui.app import HarnessApp

    ran: list[str] = []
    h = Harness()
    h.register("one", lambda i: ran.append("one") or 1)
    h.register("two", lambda i: ran.append("two") or 2, depends_on=["one"])
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    seen: list[Any] = []

    def run_one_step(app: HarnessApp) -> None:
        seen.append(app.session)
        assert app.session is not None
        app.session.live.drive(single=True)  # the user steps once, then quits

    monkeypatch.setattr(HarnessApp, "run", run_one_step)
    run = harness_tui.debug(h, name="script")
    assert seen[0].workflow.name == "script"
    assert run.status.value == "cancelled" and ran == ["one"]
    assert [(e.task, e.status.value) for e in run.events if e.status.value != "running"] == [
        ("one", "succeeded"),
        ("two", "cancelled"),
    ]


def test_jsonl_lines_keep_the_canonical_event_and_add_meta(tmp_path: Path) -> None:
    target = tmp_path / "events.jsonl"
    code, _, err = harness("run", YAML_DEMO, "--no-store", "-q", "--jsonl", str(target))
    assert code == 0, err
    lines = target.read_text().splitlines()
    assert len(lines) == 8
    first, second = (json.loads(line) for line in lines[:2])
    assert first["meta"]["task_name"] == "extract_user_info" and first["meta"]["end_time"] is None
    assert second["meta"]["start_time"] == first["meta"]["start_time"]
    assert second["meta"]["end_time"].endswith("Z")
    assert second["meta"]["input_digest"] == first["input_digest"]
    assert second["meta"]["output_digest"] == second["output_digest"]
    canonical = {k: v for k, v in second.items() if k != "meta"}
    assert lines[1].startswith(json.dumps(canonical, separators=(",", ":"), sort_keys=True)[:-1])


def test_a_stored_python_run_exports_and_resumes(tmp_path: Path) -> None:
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.records.store import RunStore
    from harness_tui.workflow.python_source import load_python

    store = RunStore(tmp_path / "runs.sqlite3")
    workflow = load_python(PY_DEMO)
    live = LiveRun.start(workflow, workflow.payload, RunSettings(store=store))
    live.drive(single=True)
    live.abandon()  # left after one task, as a closed workbench leaves it
    assert live.run_id is not None
    code, _, err = harness("resume", live.run_id, "--store", str(tmp_path / "runs.sqlite3"))
    assert code == 0, err
    record = store.export(live.run_id)
    assert record.document["spec"]["name"] == "user_profile"
    whole = tmp_path / "whole.json"
    assert harness("run", PY_DEMO, "--no-store", "-q", "--export", str(whole))[0] == 0
    assert record.digests == RunRecord.read(whole).digests


def test_a_python_run_reruns_and_diffs_against_its_yaml_twin_stably(tmp_path: Path) -> None:
    export = tmp_path / "py.json"
    assert harness("run", PY_DEMO, "--no-store", "-q", "--export", str(export))[0] == 0
    for extra in ([], ["--workflow", PY_DEMO]):  # the module is imported again either way
        code, _, err = harness("rerun", str(export), "--from", "check_quota", "--no-store",
                               "-q", *extra)  # fmt: skip
        assert code == 0, err
    code, out, _ = harness("diff", YAML_DEMO, PY_DEMO)  # the same when:, as condition(...)
    assert out.endswith("0 added, 0 removed, 0 moved, 0 changed\n") and " at 0x" not in out


def test_what_a_module_prints_on_import_stays_off_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "noisy.py").write_text(
        'print("IMPORTED \\x1b]0;TITLE\\x07")\n'
        "from harness_tui import Harness\n"
        "def build():\n"
        '    print("building")\n'
        "    h = Harness()\n"
        '    h.register("a", lambda i: 1)\n'
        "    return h\n"
    )
    sys.modules.pop("noisy", None)
    code, out, err = harness("plan", "noisy.py:build", "--json")
    sys.modules.pop("noisy", None)
    assert code == 0 and json.loads(out)["workflow"] == "noisy"
    assert "IMPORTED \\x1b]0;TITLE\\x07" in err and "building" in err and "\x1b" not in err


def test_debug_takes_the_harness_workers() -> None:
    meet = threading.Barrier(2, timeout=5)

    def together(inputs: Any) -> int:
        meet.wait()  # returns only when both tasks run at once
        return 1

    h = Harness(workers=2)
    h.register("a", together)
    h.register("b", together)
    run = harness_tui.debug(h, headless=True)
    assert run.status.value == "succeeded" and run.workers == 2


@pytest.mark.parametrize("command", ["validate", "plan", "run"])
def test_a_keyboard_interrupt_in_a_factory_is_an_interruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mod.py").write_text("def build():\n    raise KeyboardInterrupt\n")
    sys.modules.pop("mod", None)
    code, _, err = harness(command, "mod.py:build")
    sys.modules.pop("mod", None)
    assert code == 130
    assert err == "error: interrupted while loading the workflow\n"


def test_a_docstring_that_is_not_text_is_no_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mod.py").write_text(GRAPH + "__doc__ = 5\n")
    sys.modules.pop("mod", None)
    code, out, err = harness("validate", "mod.py:build")
    sys.modules.pop("mod", None)
    assert code == 0, err
    assert out == "ok: mod.py:build (1 task)\n"
