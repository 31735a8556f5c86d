"""A third party's executor, written from the contract alone, found through its entry point
and held to the determinism the built-ins keep (docs/executors.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.graph import TaskGraph
from harness_tui.engine.orchestrator import OnFailure, TaskOrchestrator
from harness_tui.workflow.loader import load_workflow
from tests.conftest import WORKFLOWS
from tests.engine.test_parallel import graphs

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(WORKFLOWS.glob("*.yaml"))

TOY = '''
"""A toy executor: every attempt is pickled to a pool of worker processes and run there."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from harness_tui.executors import Attempt, Executor, Outcome


class ToyExecutor(Executor):
    name = "toy"
    pickles = True  # the run refuses lambdas and closures before it starts

    def __init__(self, processes: int = 2) -> None:
        self.processes = processes
        self.pool: ProcessPoolExecutor | None = None

    @classmethod
    def from_option(cls, arg: str | None) -> ToyExecutor:
        return cls(int(arg) if arg else 2)

    def start(self) -> None:
        spawn = multiprocessing.get_context("spawn")
        self.pool = ProcessPoolExecutor(self.processes, mp_context=spawn)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def capacity(self) -> int:
        return self.processes

    def run(self, attempt: Attempt) -> Outcome:
        assert self.pool is not None, "start() comes first"
        return self.pool.submit(attempt).result()  # attempt() runs in a worker process
'''

ENTRY_POINTS = "[harness_tui.executors]\ntoy = harness_toy:ToyExecutor\n"


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the toy and its distribution's metadata, as pip would lay it out."""
    site = tmp_path_factory.mktemp("site")
    (site / "harness_toy.py").write_text(textwrap.dedent(TOY))
    info = site / "harness_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harness-toy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


@pytest.fixture(scope="module")
def toy_module(plugin_site: Path) -> Iterator[ModuleType]:
    sys.path.insert(0, str(plugin_site))
    try:
        import harness_toy  # type: ignore[import-not-found]

        yield harness_toy
    finally:
        sys.path.remove(str(plugin_site))
        sys.modules.pop("harness_toy", None)


def _cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def _serial_digest(path: Path) -> str:
    workflow = load_workflow(path)
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(), on_failure=workflow.on_failure
    )
    return orchestrator.start(workflow.payload).run_to_end().digest


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(path, marks=[] if path.name == "user_profile.yaml" else [pytest.mark.slow])
        for path in SHIPPED
    ],
    ids=lambda path: path.name,
)
def test_the_shipped_workflows_give_the_serial_digests_on_a_plugin(
    plugin_site: Path, path: Path
) -> None:
    """Installed only as metadata on the path of a fresh process: ``--executor toy`` finds it
    through the entry point, and runs every shipped workflow (two workers: its capacity) to
    the digest of a serial run (one in the fast tier, the others in the slow one)."""
    result = _cli(plugin_site, "run", str(path), "--executor", "toy", "--no-store")
    assert result.returncode in (0, 1), result.stderr
    found = re.search(r"run digest: ([0-9a-f]{64})", result.stderr)
    assert found is not None, result.stderr
    assert found.group(1) == _serial_digest(path), path.name


def test_a_plugin_wrapped_in_process_isolation_gives_the_serial_digest(plugin_site: Path) -> None:
    path = WORKFLOWS / "user_profile.yaml"
    isolated = _cli(plugin_site, "run", str(path), "--executor", "toy=1", "--isolation",
                    "process", "--no-store")  # fmt: skip
    assert isolated.returncode == 0, isolated.stderr
    assert _serial_digest(path) in isolated.stderr


def test_an_unknown_executor_is_one_line_listing_the_plugins_too(plugin_site: Path) -> None:
    result = _cli(plugin_site, "run", str(SHIPPED[0]), "--executor", "ray", "--no-store")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "unknown executor 'ray'; available: dask, threads, toy" in result.stderr


@pytest.fixture(scope="module")
def toy(toy_module: ModuleType) -> Iterator[Any]:
    executor = toy_module.ToyExecutor(2)
    executor.start()
    yield executor
    executor.close()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(case=graphs())
def test_a_plugin_keeps_the_serial_trace_with_one_and_four_workers(
    toy: Any, case: tuple[TaskGraph, OnFailure]
) -> None:
    graph, on_failure = case
    serial = TaskOrchestrator(graph, on_failure=on_failure).start({}).run_to_end()
    for workers in (1, 4):
        run = TaskOrchestrator(graph, on_failure=on_failure, executor=toy, workers=workers)
        done = run.start({}).run_to_end()
        assert done.canonical_trace() == serial.canonical_trace()
        assert done.digests() == serial.digests()
        assert done.status is serial.status
