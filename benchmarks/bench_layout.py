"""The DAG layout of a generated workflow, against the layout it replaced (issue 14).

The baseline is the old ``harness_tui/tui/dag_layout.py`` read from git (``--base``, default
``main``; once main has the new layout, the commit before the old file was removed) and
measured in the same run. Printed: best-of wall times of the old layout, the new one from
scratch (layering, ordering, lanes, geometry in each mode), the geometry alone (what a mode
switch or a resize costs), and drawing one 160x50 screen of rows; ratios are new/old.

Run: python benchmarks/bench_layout.py [--tasks 2000] [--shape layered] [--repeats 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of

from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.layout import Mode, fit_name_width, line_chars, place, route_dag
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow

ROOT = Path(__file__).resolve().parents[1]
OLD = "harness_tui/tui/dag_layout.py"


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def old_layout(base: str) -> tuple[str, Any]:
    """The replaced layout module, compiled from ``base`` (or the last commit that had it)."""
    try:
        source = git("show", f"{base}:{OLD}")
    except subprocess.CalledProcessError:
        removed = git("rev-list", "-n", "1", "HEAD", "--", OLD).strip()
        base = f"{removed[:12]}^"
        source = git("show", f"{base}:{OLD}")
    module = types.ModuleType("old_dag_layout")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{base}:{OLD}", "exec"), module.__dict__)
    return base, module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--shape", default="layered")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--base", default="main")
    args = parser.parse_args()
    workflow = parse_workflow(generate_workflow(args.tasks, args.shape))
    plan = DeterministicScheduler(workflow.graph).plan(workflow.payload)
    names = list(plan.names)
    levels = dict(zip(plan.names, plan.levels, strict=True))
    depends = {n: node.depends_on for n, node in workflow.graph.nodes.items()}
    base, old = old_layout(args.base)

    baseline = best_of(args.repeats, lambda: old.layout_dag(names, levels, depends))
    print(f"{args.tasks} tasks, {args.shape}; baseline: the layout of {base}")
    print(f"old layout:                      {baseline * 1000:8.1f} ms")
    routing = route_dag(names, levels, depends)
    rows: list[tuple[str, float]] = [
        ("new, from scratch, full", best_of(args.repeats, lambda: place(
            route_dag(names, levels, depends), Mode.FULL))),
        ("new, from scratch, compact", best_of(args.repeats, lambda: place(
            route_dag(names, levels, depends), Mode.COMPACT, 8))),
        ("new, geometry only (z, resize)", best_of(args.repeats, lambda: place(
            routing, Mode.COMPACT, fit_name_width(routing, Mode.COMPACT, 100)))),
    ]  # fmt: skip
    for title, seconds in rows:
        print(f"{title + ':':32} {seconds * 1000:8.1f} ms  ({seconds / baseline:.2f}x old)")
    layout = place(routing, Mode.FULL)
    screen = best_of(args.repeats, lambda: [line_chars(layout, y, 0, 160) for y in range(50)])
    print(f"{'draw one 160x50 screen of lines:':32} {screen * 1000:8.1f} ms")
    print(f"drawing: {layout.width} x {layout.height} cells (full), lanes per gap up to "
          f"{max((gap.lanes for gap in routing.gaps), default=0)}")  # fmt: skip


if __name__ == "__main__":
    main()
