"""100,000 tasks end to end through the CLI: every command on a generated workflow, its wall
time and peak RSS (``ru_maxrss`` of each process), and ``run --no-store -q`` against the
engine's run of the same loaded graph (``TaskOrchestrator(wf.graph)`` to the end, load
excluded) in the same run (target: at most 2x).

``run --store --export``, ``replay`` and ``diff`` of two runs (exports, and run ids of the
store) are also given as ratios of ``run --no-store -q``'s wall time and peak RSS in the same
run (target: at most 1.5x).

Each command runs ``--rounds`` times, the rounds interleaved (every command once, then
again): the figures are medians with their spreads (min-max), the ratios medians of the
per-round ratios (a loaded machine slows a round's commands together). CPU seconds (user and
system) are given beside wall time: on a shared machine they move far less.

``--only replay,diff``: only the commands whose names start so, besides the runs every
ratio needs (``run --no-store``, ``run --store`` with and without ``--export``): more rounds
in the same time.

Run: python benchmarks/bench_100k.py [--tasks 100000] [--rounds 3] [--only NAMES] [--tree TREE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent

ENGINE = """
import gc, json, resource, sys, time
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.workflow.loader import load_workflow
wf = load_workflow(sys.argv[1])
start = time.perf_counter()
run = TaskOrchestrator(wf.graph, on_failure=wf.on_failure).start(wf.payload)
run.run_to_end()
took = time.perf_counter() - start
assert run.status.value == "succeeded", run.status
print(json.dumps({"seconds": took, "digest": run.digest}))
"""


def _timed(
    args: list[str], env: dict[str, str], out: Path | None = None
) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user and system, its children's included) and peak RSS
    (MiB) of one process."""
    stdout = out.open("w") if out else subprocess.DEVNULL
    start = time.perf_counter()
    # From the measured tree: ``python -m`` puts the working folder first on sys.path.
    process = subprocess.Popen(
        args, env=env, cwd=env["PYTHONPATH"], stdout=stdout, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    took = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if out:
        stdout.close()  # type: ignore[union-attr]
    if process.returncode != 0:
        error = process.stderr.read().decode()[-500:] if process.stderr else ""
        raise SystemExit(f"{' '.join(args)}: exit {process.returncode}: {error}")
    return took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--tree", type=Path, default=HERE.parent)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", default="", help="command name prefixes, comma-separated")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(args.tree.resolve()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed package runs
    folder = Path(tempfile.mkdtemp())
    big, export, store = folder / "big.yaml", folder / "run.json", folder / "runs.db"
    cli = [sys.executable, "-m", "harness_tui"]
    print(f"tree: {args.tree.resolve().name}  tasks: {args.tasks}")
    steps: list[tuple[str, list[str], Path | None]] = [
        ("generate", [*cli, "generate", "--tasks", str(args.tasks)], big),
        ("validate", [*cli, "validate", str(big)], None),
        ("plan --json", [*cli, "plan", str(big), "--json"], None),
        ("plan (piped)", [*cli, "plan", str(big)], None),
        ("run --no-store -q", [*cli, "run", str(big), "--no-store", "-q"], None),
        (
            "run --store -q --export",
            [*cli, "run", str(big), "--store", str(store), "-q", "--export", str(export)],
            None,
        ),
        ("run --store -q", [*cli, "run", str(big), "--store", str(store), "-q"], None),
        ("runs", [*cli, "runs", "--store", str(store)], None),
        ("replay", [*cli, "replay", str(export)], None),
        ("diff FILE FILE", [*cli, "diff", str(big), str(big)], None),
        ("diff RUN RUN", [*cli, "diff", str(export), str(export)], None),
        ("diff ID ID", [*cli, "diff", "--store", str(store)], None),  # the two stored runs
        ("engine (load excluded)", [sys.executable, "-c", ENGINE, str(big)], folder / "e.json"),
    ]
    if args.only:
        wanted = (*args.only.split(","), "generate", "run ", "engine")
        steps = [step for step in steps if step[0].startswith(wanted)]
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    peaks: dict[str, list[float]] = {}
    for round_ in range(args.rounds):
        store.unlink(missing_ok=True)  # each round records into a new store
        for name, command, out in steps if round_ == 0 else steps[1:]:
            if name == "diff ID ID":
                command = [*command, *_stored_ids(cli, store, env)]
            took, cpu, rss = _timed(command, env, out)
            if name.startswith("engine"):
                took = cpu = float(json.loads((folder / "e.json").read_text())["seconds"])
            walls.setdefault(name, []).append(took)
            cpus.setdefault(name, []).append(cpu)
            peaks.setdefault(name, []).append(rss)
    print(f"{'command':26} {'wall s':>8} {'spread':>13} {'CPU s':>7} {'RSS MiB':>8}")
    for name in walls:
        times = walls[name]
        spread = f"{min(times):.2f}-{max(times):.2f}"
        cpu = median(cpus[name])
        print(f"{name:26} {median(times):8.2f} {spread:>13} {cpu:7.2f} {median(peaks[name]):8.0f}")
    base = "run --no-store -q"
    ratio = _ratios(walls[base], walls["engine (load excluded)"])
    print(f"{base} / engine run: {ratio} (target <= 2; the CLI includes its load)")
    for name in [n for n in ("run --store -q --export", "replay", "diff RUN RUN", "diff ID ID")
                 if n in walls]:  # fmt: skip
        time_ratio = _ratios(walls[name], walls[base])
        cpu_ratio = _ratios(cpus[name], cpus[base])
        rss_ratio = _ratios(peaks[name], peaks[base])
        print(
            f"{name} / {base}: time {time_ratio}, CPU {cpu_ratio}, peak RSS {rss_ratio} "
            "(target <= 1.5)"
        )


def _stored_ids(cli: list[str], store: Path, env: dict[str, str]) -> list[str]:
    """The ids of the runs in ``store`` (not timed)."""
    listed = subprocess.run(
        [*cli, "runs", "--store", str(store), "--json"],
        env=env, cwd=env["PYTHONPATH"], capture_output=True, check=True, text=True,
    )  # fmt: skip
    return [run["id"] for run in json.loads(listed.stdout)]


def _ratios(values: list[float], bases: list[float]) -> str:
    """The median of the per-round ratios, with their spread."""
    ratios = [value / base for value, base in zip(values, bases, strict=True)]
    return f"{median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]"


if __name__ == "__main__":
    main()
