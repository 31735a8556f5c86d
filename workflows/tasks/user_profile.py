"""Tasks of the seed article's demo: look up a user, check quota, enrich, compose."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Inputs = Mapping[str, Any]


def extract_user_info(inputs: Inputs) -> dict[str, Any]:
    return {"user_id": inputs["payload"]["user_id"]}


def check_quota(inputs: Inputs) -> dict[str, Any]:
    return {"quota": inputs["params"].get("limit", 100)}


def default_quota(inputs: Inputs) -> dict[str, Any]:
    return {"quota": 0, "degraded": True}


def enrich_user_data(inputs: Inputs) -> dict[str, Any]:
    return {"level": "gold"}


def compose_response(inputs: Inputs) -> dict[str, Any]:
    results = inputs["context"]["results"]
    return {
        "final": {
            "user_id": results["extract_user_info"]["user_id"],
            "level": results["enrich_user_data"]["level"],
            "quota": results["check_quota"]["quota"],
        }
    }
