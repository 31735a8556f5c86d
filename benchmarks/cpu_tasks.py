"""Tasks for the Dask part of ``bench_parallel.py``: a module of their own, so that Dask
workers import them by reference (the benchmark script itself runs as ``__main__``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def spin(inputs: Mapping[str, Any]) -> int:
    """CPU-bound work: ``params.n`` rounds of integer arithmetic."""
    return burn(int(inputs["params"]["n"]))


def burn(n: int) -> int:
    total = 0
    for i in range(n):
        total = (total + i * i) % 1_000_003
    return total


def trivial(inputs: Mapping[str, Any]) -> int:
    return 1


def trivial_direct(*results: int) -> int:
    return 1
