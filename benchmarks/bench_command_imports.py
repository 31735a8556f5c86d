"""What each command costs to start: its imports (``python -X importtime``) and its whole-process
wall time on a 4-task workflow, against ``python -c pass`` and ``python -c "import yaml,
pydantic"`` measured in the same run (target: ``validate`` within 60 ms of the latter).

Printed per command: the best wall time of N runs (the machine is shared), the time spent
importing (sum of every module's own import time) and the heaviest top-level imports.
``validate (a problem)`` reads a file with an unknown key: the plainly valid reading gives up
and the pydantic models (built on first use) judge it and word the message.

Measured on a shared 2-core machine, best of 7, before/after lazy command modules and the
pydantic-free reading of plainly valid files: ``validate`` 180 -> 90 ms (``import yaml,
pydantic`` 55-57 ms: 123 -> 35 ms more), ``plan`` 182 -> 88 ms, ``--help`` 66 -> 64 ms,
``schema`` 68 -> 52 ms, ``generate`` 73 -> 55 ms; ``validate (a problem)`` 181 -> 161 ms. The
commands on runs (``run``, ``runs``, ``replay``, ``diff``: 230-275 ms) mostly paid for
``harness_tui.records``: a run that writes an export no longer loads the schema that reads one
(pydantic and the export's models) nor ``importlib.metadata`` until it writes.

Run: python benchmarks/bench_command_imports.py [--runs 7] [--tree TREE]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

SMALL = """\
name: small
payload: {n: 1}
tasks:
  a: {run: builtin:echo}
  b: {run: builtin:echo, depends_on: [a]}
  c: {run: builtin:echo, depends_on: [a]}
  d: {run: builtin:merge, depends_on: [b, c]}
"""

_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def _commands(folder: Path) -> dict[str, list[str]]:
    small = folder / "small.yaml"
    small.write_text(SMALL)
    # A file the plain reading leaves to the pydantic models (their messages): the slow path.
    unknown_key = folder / "unknown_key.yaml"
    unknown_key.write_text(SMALL.replace("{run: builtin:echo}", "{run: builtin:echo, retry: 2}"))
    export = folder / "run.json"
    store = folder / "runs.db"
    cli = ["-m", "harness_tui"]
    subprocess.run([sys.executable, *cli, "run", str(small), "--no-store", "-q", "--export",
                    str(export)], check=True, env=_ENV, cwd=_ENV["PYTHONPATH"])  # fmt: skip
    return {
        "python -c pass": ["-c", "pass"],
        "import yaml, pydantic": ["-c", "import yaml, pydantic"],
        "--help": [*cli, "--help"],
        "validate": [*cli, "validate", str(small)],
        "validate (a problem)": [*cli, "validate", str(unknown_key)],
        "plan": [*cli, "plan", str(small)],
        "run --no-store": [*cli, "run", str(small), "--no-store", "-q"],
        "run --store": [*cli, "run", str(small), "--store", str(store), "-q"],
        "runs": [*cli, "runs", "--store", str(store)],
        "replay": [*cli, "replay", str(export)],
        "diff": [*cli, "diff", str(small), str(small)],
        "schema": [*cli, "schema", "workflow"],
        "generate": [*cli, "generate", "--tasks", "4"],
    }


# As an installed package runs: its modules' bytecode cached after the first run (an
# environment that forbids writing it would time the compiler, on every run).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _wall(args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=_ENV, cwd=_ENV["PYTHONPATH"])  # fmt: skip
        times.append(time.perf_counter() - start)
    return min(times)


def _imports(args: list[str]) -> tuple[float, list[tuple[float, str]]]:
    """Total import time (ms) and the top-level imports by cumulative time."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                          text=True, env=_ENV, cwd=_ENV["PYTHONPATH"])  # fmt: skip
    total, top = 0, []
    for match in _LINE.finditer(done.stderr):
        own, cumulative, indent, name = match.groups()
        total += int(own)
        if not indent:
            top.append((int(cumulative) / 1e3, name))
    return total / 1e3, sorted(top, reverse=True)[:3]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--tree", type=Path, default=HERE.parent)
    args = parser.parse_args()
    _ENV["PYTHONPATH"] = str(args.tree.resolve())
    commands = _commands(Path(tempfile.mkdtemp()))
    print(f"tree: {args.tree.resolve().name}  (best of {args.runs} runs)")
    print(f"{'command':24} {'wall ms':>8} {'imports ms':>11}  heaviest top-level imports (ms)")
    walls = {}
    for name, command in commands.items():
        walls[name] = _wall(command, args.runs) * 1e3
        total, top = _imports(command)
        heaviest = ", ".join(f"{module} {ms:.0f}" for ms, module in top)
        print(f"{name:24} {walls[name]:8.1f} {total:11.1f}  {heaviest}")
    extra = walls["validate"] - walls["import yaml, pydantic"]
    print(f"validate - import yaml, pydantic: {extra:.1f} ms (target <= 60)")


if __name__ == "__main__":
    main()
