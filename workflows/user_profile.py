"""The seed article's demo written in Python: the same tasks, plan and results as
user_profile.yaml. Open it from its folder with ``harness-tui user_profile.py:build_harness``."""

from __future__ import annotations

from tasks.user_profile import (
    check_quota,
    compose_response,
    default_quota,
    enrich_user_data,
    extract_user_info,
)

from harness_tui import Harness, condition

NAME = "user_profile"
DESCRIPTION = "Look up a user, check their quota and level, and compose a response."
PAYLOAD = {"user_id": "u001"}


def build_harness() -> Harness:
    harness = Harness()
    harness.register("extract_user_info", extract_user_info)
    harness.register(
        "check_quota",
        check_quota,
        depends_on=["extract_user_info"],
        max_retries=2,
        retry_interval=0.5,
        timeout_seconds=5,
        fallback=default_quota,
        when=condition("payload.user_id != 'anonymous'"),  # the YAML file's, as written
        params={"limit": 100},
    )
    harness.register("enrich_user_data", enrich_user_data, depends_on=["extract_user_info"])
    harness.register(
        "compose_response", compose_response, depends_on=["check_quota", "enrich_user_data"]
    )
    return harness
