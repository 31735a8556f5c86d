"""Whole-process costs of the CLI, each against its baseline measured in the same run.

- store: ``run FILE --store S -q`` against ``run FILE --no-store -q`` (target: at most 1.25x
  and at most 15 µs per task extra at 10,000 tasks);
- plan: the ``plan FILE`` table (piped: plain text) against ``plan FILE --json`` (target: at
  most 1.2x at 10,000 tasks);
- start: ``validate`` of a 4-task file against ``python -c "import yaml, pydantic"`` (target:
  at most 60 ms more; measured 116 ms more before the commands loaded lazily and plainly valid
  files skipped the pydantic models, 33 ms after, best of 9: ``--only start --tasks 100``).

Runs alternate between the two sides so that drift hits both alike; the best of ``--rounds``
is printed. ``--tree`` measures another source tree's package (e.g. a worktree of the commit
before a change) with this script, for before/after figures.

Run: python benchmarks/bench_cli.py [--tasks 10000] [--rounds 5] [--only store,plan,start]
     [--tree TREE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_command_imports import SMALL  # the same 4-task workflow

HERE = Path(__file__).resolve().parent


def _timer(env: dict[str, str]) -> Callable[[list[str]], float]:
    def timed(args: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(args, env=env, cwd=env["PYTHONPATH"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)  # fmt: skip
        return time.perf_counter() - start

    return timed


def _pair(
    timed: Callable[[list[str]], float], rounds: int, base: list[str], new: Callable[[], list[str]]
) -> tuple[float, float]:
    """Best times of ``base`` and ``new`` (a fresh command each round), alternating."""
    best_base = best_new = float("inf")
    for _ in range(rounds):
        best_base = min(best_base, timed(base))
        best_new = min(best_new, timed(new()))
    return best_base, best_new


def _store_figures(
    timed: Callable[[list[str]], float],
    cli: list[str],
    big: Path,
    folder: Path,
    rounds: int,
    n: int,
) -> None:
    """``run --store S`` into a store that exists (the default store after its first run: the
    steady state), and into a new file each time (creating it costs a few fsyncs once)."""
    kept = folder / "kept.db"
    timed([*cli, "run", str(big), "--store", str(kept), "-q"])  # creates S
    stores = iter(range(1_000_000))
    base, new = _pair(timed, rounds, [*cli, "run", str(big), "--no-store", "-q"],
                      lambda: [*cli, "run", str(big), "--store", str(kept), "-q"])  # fmt: skip
    fresh = min(
        timed([*cli, "run", str(big), "--store", str(folder / f"s{next(stores)}.db"), "-q"])
        for _ in range(rounds)
    )
    extra = (new - base) / n * 1e6
    print(f"run --no-store -q:   {base:7.3f} s")
    print(f"run --store S -q:    {new:7.3f} s  (S exists; a new S each time: {fresh:.3f} s)")
    print(f"store ratio:         {new / base:7.3f}x  (target <= 1.25)")
    print(f"store extra:         {extra:7.1f} µs/task  (target <= 15)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="store,plan,start")
    parser.add_argument("--tree", type=Path, default=HERE.parent)
    args = parser.parse_args()
    # Run from the measured tree: ``python -m`` puts the working folder first on sys.path.
    env = dict(os.environ, PYTHONPATH=str(args.tree.resolve()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed package runs
    timed = _timer(env)
    py = [sys.executable]
    cli = [*py, "-m", "harness_tui"]
    folder = Path(tempfile.mkdtemp())
    big = folder / "big.yaml"
    with big.open("w") as out:
        subprocess.run([*cli, "generate", "--tasks", str(args.tasks)], env=env,
                       cwd=env["PYTHONPATH"], stdout=out, check=True)  # fmt: skip
    small = folder / "small.yaml"
    small.write_text(SMALL)
    only = set(args.only.split(","))
    n = args.tasks
    print(f"tree: {args.tree.resolve().name}  tasks: {n}  rounds: {args.rounds} (best of)")
    if "store" in only:
        _store_figures(timed, cli, big, folder, args.rounds, n)
    if "plan" in only:
        base, new = _pair(timed, args.rounds, [*cli, "plan", str(big), "--json"],
                          lambda: [*cli, "plan", str(big)])  # fmt: skip
        print(f"plan --json:         {base:7.3f} s")
        print(f"plan (table, piped): {new:7.3f} s")
        print(f"plan ratio:          {new / base:7.3f}x  (target <= 1.2)")
    if "start" in only:
        base, new = _pair(timed, max(args.rounds, 10), [*py, "-c", "import yaml, pydantic"],
                          lambda: [*cli, "validate", str(small)])  # fmt: skip
        print(f"import yaml,pydantic:{base * 1e3:7.1f} ms")
        print(f"validate (4 tasks):  {new * 1e3:7.1f} ms")
        print(f"start extra:         {(new - base) * 1e3:7.1f} ms  (target <= 60)")


if __name__ == "__main__":
    main()
