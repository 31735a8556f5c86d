"""Synthetic workflows for benchmarks and stress tests."""

from __future__ import annotations

import json

__all__ = ["generate_workflow"]

SHAPES = ("wide", "chain", "layered")


def generate_workflow(tasks: int, shape: str = "wide", name: str | None = None) -> str:
    """YAML text of a workflow of ``tasks`` trivial ``builtin:echo`` tasks.

    Shapes: ``wide`` (a root, siblings, a sink), ``chain`` (each task depends on the previous),
    ``layered`` (layers of up to 50 tasks, each depending on two tasks of the layer before).
    """
    if tasks < 1:
        raise ValueError("a workflow needs at least one task")
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {', '.join(SHAPES)}")
    names = [f"t{i:06d}" for i in range(tasks)]
    deps: list[list[str]] = []
    for i in range(tasks):
        if shape == "chain":
            deps.append([names[i - 1]] if i else [])
        elif shape == "wide":
            if i == 0 or tasks < 3:
                deps.append([names[0]] if i else [])
            elif i == tasks - 1:
                deps.append(names[1:-1])
            else:
                deps.append([names[0]])
        else:
            width = 50
            layer, slot = divmod(i, width)
            if layer == 0:
                deps.append([])
            else:
                base = (layer - 1) * width
                picks = {base + slot, base + (slot * 7 + 3) % width}
                deps.append([names[p] for p in sorted(picks)])
    lines = [
        f"name: {name or f'synthetic_{shape}_{tasks}'}",
        f"description: {tasks} generated tasks, {shape} shape.",
        "payload: {run: synthetic, user: {id: u001, tier: gold}, flags: [a, b, c], seed: 12345}",
        "tasks:",
    ]
    for i, task in enumerate(names):
        lines.append(f"  {task}:")
        lines.append("    run: builtin:echo")
        if deps[i]:
            lines.append(f"    depends_on: {json.dumps(deps[i])}")
        lines.append(f"    with: {{index: {i}}}")
    return "\n".join(lines) + "\n"
