"""``--executor dask``: attempts on a Dask cluster keep the serial trace and digests (issue 16).

Two clusters for the whole session: an in-process LocalCluster with two worker processes, and
a real ``dask scheduler`` with two ``dask worker`` processes on 127.0.0.1, each worker in a
folder of its own (nothing of the tests' is on their path: the task folders are uploaded).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from harness_tui.cli import cli
from harness_tui.engine.attempt import ExecutorError
from harness_tui.engine.events import Status
from harness_tui.engine.graph import TaskGraph
from harness_tui.engine.harness import Harness
from harness_tui.engine.orchestrator import OnFailure, Run, TaskOrchestrator
from harness_tui.executors.dask import DaskCluster, DaskExecutor
from harness_tui.executors.registry import executor_from_option
from harness_tui.records.runs.settings import RunSettings
from harness_tui.workflow.loader import load_workflow
from tests.conftest import WORKFLOWS
from tests.engine.test_parallel import graphs

pytest.importorskip("distributed")

# Dask end to end: clusters of worker processes, started and closed per session.
pytestmark = pytest.mark.slow

SHIPPED = sorted(WORKFLOWS.glob("*.yaml"))


@pytest.fixture(scope="session")
def local_cluster() -> Iterator[DaskCluster]:
    cluster = DaskCluster(workers=2)
    yield cluster
    cluster.close()


def _wait_for_file(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists() or not path.stat().st_size:
        assert process.poll() is None, "dask scheduler exited"
        assert time.monotonic() < deadline, "dask scheduler did not start"
        time.sleep(0.1)


@pytest.fixture(scope="session")
def scheduler_address() -> Iterator[str]:
    """A real scheduler and two workers, each process in its own empty folder."""
    with tempfile.TemporaryDirectory(prefix="harness-dask-") as root:
        folders = [Path(root) / name for name in ("scheduler", "worker1", "worker2")]
        for folder in folders:
            folder.mkdir()
        file = folders[0] / "scheduler.json"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        dask = [sys.executable, "-m", "dask"]
        scheduler = subprocess.Popen(
            [*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(file)],
            cwd=folders[0], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        processes = [scheduler]
        try:
            _wait_for_file(file, scheduler)
            address = json.loads(file.read_text())["address"]
            for folder in folders[1:]:
                worker = [*dask, "worker", address, "--nthreads", "1", "--no-dashboard",
                          "--no-nanny", "--local-directory", str(folder)]  # fmt: skip
                processes.append(
                    subprocess.Popen(
                        worker,
                        cwd=folder,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
            _wait_for_workers(address, 2)
            yield address
        finally:
            for process in reversed(processes):
                process.terminate()
            for process in reversed(processes):
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _wait_for_workers(address: str, count: int) -> None:
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(count, timeout=60)


@pytest.fixture(scope="session")
def remote_cluster(scheduler_address: str) -> Iterator[DaskCluster]:
    cluster = DaskCluster(scheduler_address)
    yield cluster
    cluster.close()


def _runs(graph: TaskGraph, on_failure: OnFailure | str, payload: object,
          cluster: DaskCluster) -> tuple[Run, Run]:  # fmt: skip
    serial = TaskOrchestrator(graph, on_failure=on_failure).start(payload).run_to_end()
    dask = TaskOrchestrator(
        graph, on_failure=on_failure, executor=DaskExecutor(cluster), workers=2
    ).start(payload)
    return serial, dask.run_to_end()


@pytest.mark.parametrize("which", ["local_cluster", "remote_cluster"])
def test_shipped_workflows_give_the_serial_digests_on_dask(
    which: str, request: pytest.FixtureRequest
) -> None:
    cluster: DaskCluster = request.getfixturevalue(which)
    for path in SHIPPED:
        workflow = load_workflow(path)
        serial, dask = _runs(workflow.graph, workflow.on_failure, workflow.payload, cluster)
        assert dask.digests() == serial.digests(), path.name
        assert dask.status is serial.status
        ran = {e.worker for e in dask.context.state.events if e.status is not Status.RUNNING}
        assert ran - {0} <= {1, 2}, "Dask workers are numbered 1 and 2 by first use"


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(case=graphs())
def test_random_dags_give_the_serial_trace_on_dask(
    local_cluster: DaskCluster, case: tuple[TaskGraph, OnFailure]
) -> None:
    graph, on_failure = case
    serial, dask = _runs(graph, on_failure, {}, local_cluster)
    assert dask.canonical_trace() == serial.canonical_trace()
    assert dask.digests() == serial.digests()


def test_a_task_folder_is_uploaded_and_its_output_and_timeouts_kept(
    remote_cluster: DaskCluster, tmp_path: Path
) -> None:
    (tmp_path / "dask_probe_tasks.py").write_text(
        textwrap.dedent(
            """
            import time

            def hello(inputs):
                print("hello from a worker")
                return {"n": inputs["payload"]["n"] + 1}

            def hang(inputs):
                time.sleep(3)
                return 1

            def rescue(inputs):
                return "rescued"
            """
        )
    )
    (tmp_path / "flow.yaml").write_text(
        textwrap.dedent(
            """
            name: probe
            payload: {n: 1}
            tasks:
              hello: {run: "dask_probe_tasks:hello"}
              hang:
                run: "dask_probe_tasks:hang"
                depends_on: [hello]
                timeout_seconds: 0.3
                fallback: "dask_probe_tasks:rescue"
            """
        )
    )
    workflow = load_workflow(tmp_path / "flow.yaml")
    run = TaskOrchestrator(workflow.graph, executor=DaskExecutor(remote_cluster), workers=2)
    done = run.start(workflow.payload).run_to_end()
    assert done.results == {"hello": {"n": 2}, "hang": "rescued"}
    statuses = [e.status for e in done.context.state.events if e.task == "hang"]
    assert statuses == [Status.RUNNING, Status.TIMED_OUT, Status.FALLBACK]
    assert done.context.logs[("hello", 1)].snapshot().text == "hello from a worker\n"


def test_the_cli_runs_and_verifies_on_an_existing_cluster(
    scheduler_address: str, tmp_path: Path
) -> None:
    path = str(WORKFLOWS / "etl_fanout.yaml")
    serial = CliRunner().invoke(cli, ["run", path, "--no-store", "-q", "--export", "-"])
    executor = f"dask={scheduler_address}"
    args = ["run", path, "--no-store", "-q", "--export", "-", "--executor", executor]
    dask = CliRunner().invoke(cli, args)
    assert dask.exit_code == 0, dask.output
    assert json.loads(dask.stdout)["digests"] == json.loads(serial.stdout)["digests"]
    verify = CliRunner().invoke(cli, ["verify", path, "--executor", executor])
    assert verify.exit_code == 0, verify.output
    assert "deterministic: 2 runs" in verify.stdout


def test_callables_without_a_reference_are_refused_in_one_line(
    local_cluster: DaskCluster,
) -> None:
    harness = Harness(executor=DaskExecutor(local_cluster), workers=2)
    harness.register("fine", _module_level)
    harness.register("closure", lambda inputs: 1, depends_on=["fine"])
    with pytest.raises(ExecutorError, match=r"task 'closure' cannot run on dask") as caught:
        harness.run({})
    assert "\n" not in str(caught.value)
    harness = Harness(executor=DaskExecutor(local_cluster), workers=2)
    harness.register("fine", _module_level)  # a Python-defined harness, by module reference
    assert harness.run({"x": 3})["results"] == {"fine": 6}


def _module_level(inputs: dict[str, object]) -> object:
    return int(inputs["payload"]["x"]) * 2  # type: ignore[index, call-overload]


def test_executor_specs_and_worker_numbers() -> None:
    assert executor_from_option("dask").address == ""  # type: ignore[attr-defined]
    remote = executor_from_option("dask=tcp://127.0.0.1:8786")
    assert remote.address == "tcp://127.0.0.1:8786"  # type: ignore[attr-defined]
    for bad in ("dask=", "ray", "dask:tcp://x"):
        with pytest.raises(ExecutorError):
            executor_from_option(bad)
    code = CliRunner().invoke(cli, ["run", str(SHIPPED[0]), "--executor", "ray"]).exit_code
    assert code == 2


def test_worker_addresses_are_numbered_by_first_use(local_cluster: DaskCluster) -> None:
    first = local_cluster.number("tcp://192.0.2.1:1")
    assert local_cluster.number("tcp://192.0.2.2:1") == first + 1
    assert local_cluster.number("tcp://192.0.2.1:1") == first


def test_a_stopped_run_resumes_on_dask_to_the_serial_digest(
    scheduler_address: str, tmp_path: Path
) -> None:
    from tests.records.test_store_leases import CHAIN, status, stopped_run

    path = tmp_path / "runs.db"
    run_id = stopped_run(path)
    args = ["resume", run_id, "--store", str(path), "--executor", f"dask={scheduler_address}"]
    resumed = CliRunner().invoke(cli, args)
    assert resumed.exit_code == 0, resumed.output
    serial = TaskOrchestrator(CHAIN.graph).start(CHAIN.payload).run_to_end()
    assert status(path) == ("succeeded", serial.digest)


def test_modules_of_the_same_name_in_two_folders_do_not_mix(
    remote_cluster: DaskCluster, tmp_path: Path
) -> None:
    results = []
    for version in (1, 2):
        folder = tmp_path / f"v{version}"
        folder.mkdir()
        (folder / "dask_same_name.py").write_text(f"def get(inputs):\n    return {version}\n")
        (folder / "flow.yaml").write_text("name: same\ntasks:\n  get: {run: dask_same_name:get}\n")
        workflow = load_workflow(folder / "flow.yaml")
        executor = DaskExecutor(remote_cluster)
        for _ in range(2):  # twice: on each of the two workers, whichever comes
            orchestrator = TaskOrchestrator(workflow.graph, executor=executor, workers=2)
            results.append(orchestrator.start({}).run_to_end().results["get"])
    assert results == [1, 1, 2, 2]


def test_a_worker_forgets_a_module_that_another_folder_provides(tmp_path: Path) -> None:
    from harness_tui.executors.dask_worker import _forget_others
    from harness_tui.workflow.refs import LazyCallable

    folders = [tmp_path / "a", tmp_path / "b"]
    for version, folder in enumerate(folders, start=1):
        folder.mkdir()
        (folder / "dask_forget_probe.py").write_text(f"def get(inputs):\n    return {version}\n")
    try:
        assert LazyCallable("dask_forget_probe:get", folders[0])({}) == 1
        _forget_others("dask_forget_probe", folders[0])  # its own folder: kept
        assert "dask_forget_probe" in sys.modules
        _forget_others("dask_forget_probe", folders[1])
        assert LazyCallable("dask_forget_probe:get", folders[1])({}) == 2
    finally:
        sys.modules.pop("dask_forget_probe", None)


def test_a_task_that_kills_its_worker_fails_with_a_deterministic_error(
    local_cluster: DaskCluster, tmp_path: Path
) -> None:
    (tmp_path / "dask_dying.py").write_text("import os\n\ndef die(inputs):\n    os._exit(3)\n")
    (tmp_path / "flow.yaml").write_text("name: die\ntasks:\n  die: {run: dask_dying:die}\n")
    workflow = load_workflow(tmp_path / "flow.yaml")
    run = TaskOrchestrator(workflow.graph, executor=DaskExecutor(local_cluster), workers=2)
    done = run.start({}).run_to_end()
    (failed,) = [e for e in done.context.state.events if e.status is Status.FAILED]
    assert failed.error == {
        "type": "DaskError",
        "message": "the Dask worker running the attempt died (or was killed)",
    }
    assert "die-1-" in (failed.traceback or "")  # Dask's own words, beside the trace
    local_cluster.client.wait_for_workers(2, timeout=60)  # the nanny starts another


async def test_the_workbench_runs_and_reruns_on_dask_with_the_serial_digest(
    local_cluster: DaskCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``open --executor dask``: the workbench's live run, and a re-run from a task (F), go
    to the cluster; the digests are the serial run's."""
    from tests.tui.conftest import make_app, settle, workbench

    path = WORKFLOWS / "etl_fanout.yaml"
    workflow = load_workflow(path)
    serial = TaskOrchestrator(workflow.graph, on_failure=workflow.on_failure)
    expected = serial.start(workflow.payload).run_to_end().digests()
    sent: list[object] = []
    execute = DaskExecutor.run

    def counted(self: DaskExecutor, attempt: Any) -> Any:
        sent.append(attempt)
        return execute(self, attempt)

    monkeypatch.setattr(DaskExecutor, "run", counted)
    app = make_app(path, executor=DaskExecutor(local_cluster), workers=2)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        await settle(pilot)
        session = app.session
        assert session is not None and session.run.finished
        assert session.run.digests() == expected
        attempts = [e for e in session.run.events if e.attempt and e.status is Status.RUNNING]
        assert len(sent) == len(attempts) > 0  # every attempt went to the cluster
        sent.clear()
        workbench(app)._select(session.run.plan.names[1])
        await pilot.press("F")
        await settle(pilot)
        assert session.live.forked_from is not None
        await pilot.press("c")
        await settle(pilot)
        assert session.run.finished and session.run.digests() == expected
        assert sent  # the re-run tasks too


def test_open_takes_the_executor_option(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def fake_create_app(path: str | None, **kwargs: object) -> object:
        seen.update(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr("harness_tui.tui.app.create_app", fake_create_app)
    bad = CliRunner().invoke(cli, ["open", str(WORKFLOWS / "etl_fanout.yaml"), "--executor", "x"])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1
    ok = CliRunner().invoke(
        cli, ["open", str(WORKFLOWS / "etl_fanout.yaml"), "--executor", "threads", "--workers", "3"]
    )
    assert ok.exit_code == 0, ok.output
    settings = seen["settings"]
    assert isinstance(settings, RunSettings)
    assert settings.executor is None and settings.workers == 3
