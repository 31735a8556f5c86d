"""The seed article's demo pipeline, registered through the Python API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness_tui import Harness


def extract_user_info(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {"user_id": inputs["payload"]["user_id"]}


def check_quota(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {"quota": 100}


def enrich_user_data(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {"level": "gold"}


def compose_response(inputs: Mapping[str, Any]) -> dict[str, Any]:
    results = inputs["context"]["results"]
    return {
        "final": {
            "user_id": results["extract_user_info"]["user_id"],
            "level": results["enrich_user_data"]["level"],
            "quota": results["check_quota"]["quota"],
        }
    }


def demo_harness() -> Harness:
    harness = Harness()
    harness.register("extract_user_info", extract_user_info)
    harness.register("check_quota", check_quota, depends_on=["extract_user_info"])
    harness.register("enrich_user_data", enrich_user_data, depends_on=["extract_user_info"])
    harness.register(
        "compose_response", compose_response, depends_on=["check_quota", "enrich_user_data"]
    )
    return harness
