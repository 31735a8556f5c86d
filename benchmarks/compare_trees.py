"""Compare the benchmarks of two source trees, alternating runs so that drift hits both alike.

Each round runs ``bench_import``, ``bench_run``, ``bench_load``, ``bench_store`` and
``bench_tui`` (the scripts of this tree) once against the base tree's package and once against
this tree's, in alternating order.
Printed per metric: the median and the spread (min-max) of each side, the ratio new/base, and
``REGRESSION`` where the new median is more than 10% worse and outside the base's spread.

Run: python benchmarks/compare_trees.py BASE_TREE [--new TREE] [--rounds 5] [--own-scripts]
     (BASE_TREE: e.g. a ``git worktree add ../base <commit>`` of the commit before a change;
     ``--own-scripts``: each tree runs its own benchmarks/ scripts, for a change of the API
     the scripts call, where this tree's scripts would not run against the base)
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEW_TREE = HERE.parent

# (script, arguments, {metric: (regex with one number group, higher_is_better)})
BENCHES: list[tuple[str, list[str], dict[str, tuple[str, bool]]]] = [
    (
        "bench_import.py",
        ["--runs", "20"],
        {"import harness_tui: own cost (ms)": (r"^import cost:\s+([\d.]+)", False)},
    ),
    (
        "bench_run.py",
        ["--sizes", "10000,100000"],
        {
            "run µs/task, no timeout, 10k": (r"^[Nn]one\s+10000\s+([\d.]+)", False),
            "run µs/task, no timeout, 100k": (r"^[Nn]one\s+100000\s+([\d.]+)", False),
            "run µs/task, 30 s timeout, 10k": (r"^30s\s+10000\s+([\d.]+)", False),
            "run µs/task, 30 s timeout, 100k": (r"^30s\s+100000\s+([\d.]+)", False),
        },
    ),
    (
        "bench_load.py",
        ["--tasks", "10000"],
        {
            "load s, 10k wide": (r"^wide\s+10000\s+([\d.]+)", False),
            "load s, 10k layered": (r"^layered\s+10000\s+([\d.]+)", False),
        },
    ),
    (
        "bench_store.py",
        ["--tasks", "10000"],
        {
            "store: in-memory µs/task": (r"^in memory:\s+([\d.]+)", False),
            "store: SQLite µs/task": (r"^SQLite:\s+([\d.]+)", False),
        },
    ),
    (
        "bench_tui.py",
        ["--tasks", "2000", "--steps", "30"],
        {
            "tui: first screen, 2000 tasks (s)": (r"^first complete screen.*?: ([\d.]+) s", False),
            "tui: one step median (ms)": (r"^one step: median ([\d.]+) ms", False),
            "tui: continue µs/task": (r"\(([\d.]+) µs per task", False),
        },
    ),
]


def run_once(script: str, args: list[str], tree: Path, scripts: Path = HERE) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    result = subprocess.run(
        [sys.executable, str(scripts / script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
    )
    return result.stdout


def parse(output: str, metrics: dict[str, tuple[str, bool]]) -> dict[str, float]:
    values = {}
    for name, (pattern, _) in metrics.items():
        match = re.search(pattern, output, re.MULTILINE)
        if match:
            values[name] = float(match.group(1))
    return values


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--new", type=Path, default=NEW_TREE, help="default: this tree")
    parser.add_argument(
        "--own-scripts", action="store_true", help="each tree runs its own benchmark scripts"
    )
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "new": args.new.resolve()}
    samples: dict[str, dict[str, list[float]]] = {"base": {}, "new": {}}
    for round_number in range(args.rounds):
        # Alternate which side goes first, so a warming or cooling machine favours neither.
        order = ["base", "new"] if round_number % 2 == 0 else ["new", "base"]
        for script, script_args, metrics in BENCHES:
            for side in order:
                scripts = trees[side] / "benchmarks" if args.own_scripts else HERE
                output = run_once(script, script_args, trees[side], scripts)
                values = parse(output, metrics)
                for name, value in values.items():
                    samples[side].setdefault(name, []).append(value)
        print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{'metric':38} {'base median [spread]':>26} {'new median [spread]':>26} {'new/base':>8}")
    for _, _, metrics in BENCHES:
        for name, (_, higher_is_better) in metrics.items():
            base, new = samples["base"].get(name), samples["new"].get(name)
            if not base or not new:
                print(f"{name:38} missing")
                continue
            b, n = statistics.median(base), statistics.median(new)
            ratio = n / b if b else float("nan")
            worse = ratio < 0.9 if higher_is_better else ratio > 1.1
            outside = n < min(base) if higher_is_better else n > max(base)
            flag = "  REGRESSION" if worse and outside else ""
            print(
                f"{name:38} {b:10.2f} [{min(base):.2f}-{max(base):.2f}]".ljust(66)
                + f"{n:10.2f} [{min(new):.2f}-{max(new):.2f}]".rjust(26)
                + f" {ratio:8.2f}{flag}"
            )


if __name__ == "__main__":
    main()
