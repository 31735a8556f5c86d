"""Plan diff of two 10,000-task versions (target: under 1 s here).

The new version renames 1% of the tasks, removes 1%, adds 1%, changes the parameters of 5%
and bumps the payload (every task id changes, so the order of siblings shifts). Baseline
measured in the same run: planning both versions (the floor of any plan diff).

Run: python benchmarks/bench_diff.py [--tasks 10000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of

from harness_tui.engine.diff import plan_diff
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow


def changed_version(graph: TaskGraph) -> TaskGraph:
    nodes = list(graph.nodes.values())
    renamed = {n.name: f"{n.name}_v2" for i, n in enumerate(nodes) if i % 100 == 7}
    removed = {
        n.name for i, n in enumerate(nodes) if i % 100 == 13 and not graph.dependents(n.name)
    }
    out = []
    for i, node in enumerate(nodes):
        if node.name in removed:
            continue
        deps = tuple(renamed.get(d, d) for d in node.depends_on if d not in removed)
        params = {**node.params, "tuned": True} if i % 20 == 3 else node.params
        name = renamed.get(node.name, node.name)
        out.append(TaskNode(name, node.fn, deps, params=params, ref=node.ref))
    kept = [node.name for node in out]
    out += [
        TaskNode(f"extra_{i}", None, (kept[i * 97 % len(kept)],), ref="builtin:echo")
        for i in range(len(nodes) // 100)
    ]
    return TaskGraph.from_nodes(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    args = parser.parse_args()
    old = parse_workflow(generate_workflow(args.tasks, "layered"))
    new_graph = changed_version(old.graph)
    new_payload = {**old.payload, "seed": old.payload["seed"] + 1}

    def plans() -> None:
        DeterministicScheduler(old.graph).plan(old.payload)
        DeterministicScheduler(new_graph).plan(new_payload)

    floor = best_of(3, plans)
    seconds = best_of(3, lambda: plan_diff(old.graph, old.payload, new_graph, new_payload))
    result = plan_diff(old.graph, old.payload, new_graph, new_payload)
    text = best_of(3, result.to_text)
    print(f"tasks: {args.tasks} -> {len(new_graph)}")
    print(f"plan_diff: {seconds:.3f} s ({seconds / floor:.1f}x planning both: {floor:.3f} s)")
    print(f"canonical JSON of the diff: {text:.3f} s")
    print(f"summary: {result.summary_line()}")


if __name__ == "__main__":
    main()
