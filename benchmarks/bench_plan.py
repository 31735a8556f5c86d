"""Plan time at 1k, 10k and 100k tasks, as ratios against baselines measured in the same run.

Baselines: (a) the seed article's quadratic planner, re-implemented (only at sizes it finishes
in under a minute), (b) networkx's lexicographical topological sort with the same key, and
(c) the floor: hashing N task ids with the payload serialized once.

Run: python benchmarks/bench_plan.py [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PAYLOAD, best_of, make_graph, shape_deps

from harness_tui.engine.graph import TaskGraph
from harness_tui.engine.scheduler import DeterministicScheduler


def article_plan(graph: TaskGraph, payload: object) -> list[str]:
    """The article's planner: scans every task per pop, re-sorts and re-hashes each time."""
    done: set[str] = set()
    order: list[str] = []
    while len(order) < len(graph):
        ready = [
            name
            for name, node in graph.nodes.items()
            if name not in done and all(dep in done for dep in node.depends_on)
        ]
        ready.sort(
            key=lambda n: hashlib.sha256(
                f"{n}:{json.dumps(payload, sort_keys=True, ensure_ascii=False)}".encode()
            ).hexdigest()[:16]
        )
        order.append(ready[0])
        done.add(ready[0])
    return order


def hash_floor(names: list[str], payload: object) -> list[str]:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return [hashlib.sha256(f"{n}:{text}".encode()).hexdigest()[:16] for n in names]


def networkx_plan(nx_graph: object, names: list[str], payload: object) -> list[str]:
    import networkx as nx

    ids = dict(zip(names, hash_floor(names, payload), strict=True))
    return list(nx.lexicographical_topological_sort(nx_graph, key=lambda n: (ids[n], n)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    try:
        import networkx as nx
    except ImportError:  # pragma: no cover
        nx = None
    print(
        f"{'shape':6} {'tasks':>7} {'ours s':>8} {'+steps s':>9} {'floor x':>8} {'nx x':>7} "
        f"{'article x':>10}"
    )
    article_seconds_per_n2: dict[str, float] = {}
    for n in (int(s) for s in args.sizes.split(",")):
        for shape in ("wide", "chain"):
            graph = make_graph(n, shape)
            scheduler = DeterministicScheduler(graph)
            names = list(graph.nodes)
            repeats = 5 if n <= 10_000 else 3
            ours = best_of(repeats, lambda: scheduler.plan(PAYLOAD))
            with_steps = best_of(repeats, lambda: scheduler.plan(PAYLOAD).steps)
            floor = best_of(repeats, lambda: hash_floor(names, PAYLOAD))
            nx_ratio = "-"
            if nx is not None:
                g = nx.DiGraph()
                g.add_nodes_from(names)
                g.add_edges_from((d, t) for t, deps in shape_deps(n, shape) for d in deps)
                nx_time = best_of(1 if n > 10_000 else 3, lambda: networkx_plan(g, names, PAYLOAD))
                assert networkx_plan(g, names, PAYLOAD) == scheduler.build_plan(PAYLOAD)
                nx_ratio = f"{nx_time / ours:.1f}"
            article = "-"
            rate = article_seconds_per_n2.get(shape)
            # The article's planner is quadratic: only run it where it should finish in a minute.
            if rate is None or rate * n * n < 60:
                seconds = best_of(1, lambda: article_plan(graph, PAYLOAD))
                article_seconds_per_n2[shape] = seconds / (n * n)
                article = f"{seconds / ours:.0f}"
            print(
                f"{shape:6} {n:>7} {ours:>8.3f} {with_steps:>9.3f} {ours / floor:>8.2f} "
                f"{nx_ratio:>7} {article:>10}"
            )
    print("ours: plan() (columns); +steps: also materializing PlanStep objects")
    print("floor x: our time / hashing floor (lower is better); nx x, article x: their time / ours")


if __name__ == "__main__":
    main()
