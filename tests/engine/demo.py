"""The seed article's demo pipeline, registered through the Python API with the very task
functions the shipped workflow file uses."""

from __future__ import annotations

from harness_tui import Harness
from workflows.tasks.user_profile import (
    check_quota,
    compose_response,
    enrich_user_data,
    extract_user_info,
)


def demo_harness() -> Harness:
    harness = Harness()
    harness.register("extract_user_info", extract_user_info)
    harness.register("check_quota", check_quota, depends_on=["extract_user_info"])
    harness.register("enrich_user_data", enrich_user_data, depends_on=["extract_user_info"])
    harness.register(
        "compose_response", compose_response, depends_on=["check_quota", "enrich_user_data"]
    )
    return harness
