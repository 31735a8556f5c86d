from __future__ import annotations

import os
from pathlib import Path

import pytest

# The suite never reads the user's config.toml nor remembers a theme in their state file; the
# tests that are about settings name their own files.
os.environ["HARNESS_TUI_CONFIG"] = ""
os.environ["HARNESS_TUI_STATE"] = ""

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / "workflows"


@pytest.fixture
def workflows() -> Path:
    return WORKFLOWS
