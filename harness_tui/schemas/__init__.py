"""The JSON Schemas the project ships (workflow files, run exports), generated from the
pydantic models and checked in so that editors can complete workflow files."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["FILES", "generate_schema", "schema_text"]

FILES = {"workflow": "workflow.schema.json", "run": "run.schema.json"}


def schema_text(kind: str) -> str:
    """The shipped schema file's text."""
    return resources.files(__package__).joinpath(FILES[kind]).read_text(encoding="utf-8")


def generate_schema(kind: str) -> str:
    """Regenerate a schema from the models (what the shipped file must equal)."""
    schema: dict[str, Any]
    if kind == "workflow":
        from ..workflow.model import workflow_schema

        schema = workflow_schema()
    else:
        from ..records.export.model import RunExport

        schema = RunExport.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["title"] = "harness-tui run export"
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas() -> None:
    """Rewrite the shipped files from the models (``python -m harness_tui.schemas``)."""
    here = resources.files(__package__)
    for kind, name in FILES.items():
        with resources.as_file(here.joinpath(name)) as path:
            path.write_text(generate_schema(kind), encoding="utf-8")
