"""The workflow file format, defined once as pydantic models (and so as a JSON Schema)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from .limits import MAX_RETRY_INTERVAL_SECONDS, MAX_TIMEOUT_SECONDS
from .plain import MAX_RETRIES, TASK_NAME_PATTERN
from .refs import REF_PATTERN

__all__ = ["Defaults", "TaskSpec", "WorkflowSpec"]


def _integral(value: Any) -> Any:
    """``2.0`` is the integer 2, as JSON Schema reads it (``2.5`` stays a float, refused)."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


NonNegativeInt = Annotated[int, Field(ge=0, le=MAX_RETRIES), BeforeValidator(_integral)]
NonNegativeSeconds = Annotated[
    float, Field(ge=0, le=MAX_RETRY_INTERVAL_SECONDS, allow_inf_nan=False)
]
PositiveSeconds = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_SECONDS, allow_inf_nan=False)]
TaskName = Annotated[str, Field(pattern=TASK_NAME_PATTERN)]
Ref = Annotated[
    str,
    Field(
        description=(
            "A callable: 'module:function' (module resolved relative to the workflow file's "
            "folder, then sys.path) or 'builtin:NAME' (echo, merge, select, sleep, fail)."
        ),
        examples=["tasks.user_profile:check_quota", "builtin:echo"],
        # In the schema only: the loader checks references itself, with better messages.
        json_schema_extra={"pattern": REF_PATTERN},
    ),
]


Isolation = Literal["in-process", "process"]
_ISOLATION = (
    "in-process (default) or process: each attempt in a child process, which contains "
    "os._exit, closed file descriptors, blocked signals and hangs (a timeout kills it)."
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class Defaults(_Strict):
    """Values every task gets unless it sets its own."""

    max_retries: NonNegativeInt = Field(0, description="Retries after the first attempt.")
    retry_interval: NonNegativeSeconds = Field(0.0, description="Fixed seconds between attempts.")
    timeout_seconds: PositiveSeconds | None = Field(None, description="Limit for one attempt.")
    isolation: Isolation = Field("in-process", description=_ISOLATION)


class TaskSpec(_Strict):
    """One task."""

    run: Ref = Field(description="What the task runs.")
    description: str = ""
    depends_on: list[TaskName] = Field(
        default_factory=list,
        description="Tasks whose outputs this one needs.",
        json_schema_extra={"uniqueItems": True},
    )
    max_retries: NonNegativeInt | None = Field(None, description="Retries after the first attempt.")
    retry_interval: NonNegativeSeconds | None = Field(
        None, description="Fixed seconds between attempts."
    )
    timeout_seconds: PositiveSeconds | None = Field(None, description="Limit for one attempt.")
    fallback: Ref | None = Field(None, description="Produces the output when every attempt failed.")
    isolation: Isolation | None = Field(None, description=_ISOLATION)
    when: str | None = Field(
        None,
        description=(
            "JMESPath over {payload, results}; a false value (false, null, empty) skips the task."
        ),
        examples=["payload.user_id != 'anonymous'"],
        json_schema_extra={"minLength": 1},
    )
    trigger: Literal["all_succeeded", "none_failed", "all_done"] = Field(
        "all_succeeded", description="Rule over the dependencies' final statuses."
    )
    with_: dict[str, Any] = Field(
        default_factory=dict, alias="with", description="Static parameters: inputs['params']."
    )


class WorkflowSpec(_Strict):
    """A workflow file."""

    name: TaskName = Field(description="The workflow's name.")
    description: str = ""
    payload: dict[str, Any] = Field(default_factory=dict, description="The default input payload.")
    defaults: Defaults = Field(default_factory=Defaults)
    on_failure: Literal["stop", "continue"] = Field(
        "stop", description="stop: cancel what remains; continue: independent branches go on."
    )
    tasks: dict[str, TaskSpec] = Field(
        description="Task name -> task.",
        min_length=1,
        json_schema_extra={"propertyNames": {"pattern": TASK_NAME_PATTERN}},
    )


def workflow_schema() -> dict[str, Any]:
    """The JSON Schema of workflow files."""
    schema = WorkflowSpec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://harness-tui.invalid/schemas/workflow.schema.json"
    schema["title"] = "harness-tui workflow"
    return schema
