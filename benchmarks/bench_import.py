"""What ``import harness_tui`` costs a script: fresh interpreters, against ``python -c pass``.

Printed: the median wall time of each over N runs and their difference (the import's own cost).

Run: python benchmarks/bench_import.py [--runs 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def median_seconds(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    floor = median_seconds("pass", args.runs)
    package = median_seconds("import harness_tui", args.runs)
    print(f"python -c pass:            {floor * 1000:7.1f} ms")
    print(f"import harness_tui:        {package * 1000:7.1f} ms")
    print(f"import cost:               {(package - floor) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
