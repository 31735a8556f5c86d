"""A small, deterministic ETL: synthetic rows, per-partition aggregates, a quality gate."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

Inputs = Mapping[str, Any]


def extract(inputs: Inputs) -> dict[str, Any]:
    payload = inputs["payload"]
    rng = random.Random(payload["seed"])
    rows = [
        {"id": i, "partition": i % payload["partitions"], "amount": rng.randint(1, 500)}
        for i in range(payload["rows"])
    ]
    return {"rows": rows}


def transform(inputs: Inputs) -> dict[str, Any]:
    partition = inputs["params"]["partition"]
    rows = [
        r for r in inputs["context"]["results"]["extract"]["rows"] if r["partition"] == partition
    ]
    amounts = [r["amount"] for r in rows]
    return {
        f"p{partition:02d}": {
            "count": len(rows),
            "total": sum(amounts),
            "max": max(amounts, default=0),
        }
    }


def quality_gate(inputs: Inputs) -> dict[str, Any]:
    merged = inputs["context"]["results"]["load"]
    total_rows = sum(part["count"] for part in merged.values())
    expected = inputs["payload"]["rows"]
    if total_rows != expected:
        raise ValueError(f"row count {total_rows} != {expected}")
    return {"rows": total_rows, "partitions": len(merged), "ok": True}
