"""The run export format (``format: harness-run``), defined as pydantic models.

Readers ignore unknown fields of a known major version and refuse an unknown major version.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...engine.events import RunStatus, Status

__all__ = ["FORMAT", "FORMAT_VERSION", "FORMAT_VERSION_IO", "FORMAT_VERSION_OVERRIDES", "RunExport"]

FORMAT = "harness-run"
FORMAT_VERSION = "1.1"
"""1.1 adds ``attempts``, ``forked_from``, ``redaction``, ``spec`` and ``unattributed_log``
beside the trace; a 1.1 reader reads 1.0 files (those fields are then absent). An export
without recorded calls is written as 1.1."""
FORMAT_VERSION_IO = "1.2"
"""1.2 adds ``attempts[].io`` and ``unattributed_io``: what the outside world answered each
attempt (docs/recording.md). Written only by a run that recorded calls; readers of 1.2 read 1.0
and 1.1 (no recordings)."""
FORMAT_VERSION_OVERRIDES = "1.3"
"""1.3 adds ``forked_from.overrides``: the what-if changes of a re-run (an output, a recorded
answer, a parameter). Written only by such a re-run; readers of 1.3 read 1.0 to 1.2."""
Digest = str


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class Tool(_Open):
    name: str
    version: str


class WorkflowRef(_Open):
    name: str
    path: str
    source: str = Field(description="The full YAML text the run was made from.")
    digest: Digest


class PlanRow(_Open):
    index: int
    task: str
    task_id: str
    level: int


class EventError(_Open):
    type: str
    message: str


class Event(_Open):
    seq: int
    task: str
    task_id: str
    status: Annotated[Status, Field(strict=False)]
    attempt: int = Field(ge=0)  # 0: never started
    error: EventError | None = None
    input_digest: Digest | None = None
    output_digest: Digest | None = None


class Timing(_Open):
    seq: int
    started_at: float | None = None
    ended_at: float | None = None
    traceback: str | None = None
    wall: float | None = Field(
        default=None, description="Epoch seconds when the event was recorded."
    )
    worker: int = Field(
        default=0, ge=0, description="Which worker ran it: 0 the run's thread, 1..N threads."
    )


class AttemptLog(_Open):
    """What an attempt printed or logged (stdout, stderr, ``logging``), bounded."""

    text: str
    truncated: bool = False


class Attempt(_Open):
    """One attempt of a task as it really ran: clock and wall times, the worker, its log.

    Not canonical: none of it enters a digest.
    """

    task: str
    attempt: int = Field(ge=1)
    kind: Literal["task", "fallback"]
    started_at: float | None = Field(None, description="The run clock's monotonic time.")
    ended_at: float | None = None
    wall_started: float | None = Field(None, description="Epoch seconds.")
    wall_ended: float | None = None
    worker: int | None = Field(None, description="Which worker ran it (0 when serial).")
    log: AttemptLog | None = None
    io: list[dict[str, Any]] | None = Field(
        None, description="Export 1.2: the attempt's recorded exchanges (docs/recording.md)."
    )


class Override(_Open):
    """One what-if change of a re-run (export 1.3; docs/recording.md)."""

    task: str
    kind: Literal["output", "answer", "with"]
    value: Any = Field(description="The output, answer or parameter value (JSON).")
    attempt: int | None = Field(None, ge=1, description="answer: the attempt edited.")
    exchange: int | None = Field(None, ge=1, description="answer: its N-th exchange.")
    param: str | None = Field(None, description="with: the parameter.")
    patch: list[dict[str, Any]] | None = Field(
        None, description="with: the change to the workflow, as JSON Patch operations."
    )

    @model_validator(mode="after")
    def _complete(self) -> Override:
        if self.kind == "answer" and (self.attempt is None or self.exchange is None):
            raise ValueError("an answer override names its attempt and exchange")
        if self.kind == "with" and self.param is None:
            raise ValueError("a with override names its parameter")
        return self


class ForkedFrom(_Open):
    """The run this one was re-run from, at which task, with which overrides."""

    run_digest: Digest
    task: str
    overrides: list[Override] = Field(default_factory=list, description="1.3.")


class Redaction(_Open):
    """How values were redacted: which keys, what replaced them, in which parts."""

    keys: list[str]
    replacement: str
    places: list[str] = Field(default_factory=list)
    unchecked: list[str] = Field(
        default_factory=list,
        description="The reader's checks skipped because they need the redacted values.",
    )


class Digests(_Open):
    payload: Digest
    plan: Digest
    trace: Digest
    results: Digest
    run: Digest


class RunExport(_Open):
    """One run, at rest."""

    format: Literal["harness-run"]
    format_version: str = Field(pattern=r"^1\.\d+$")
    tool: Tool
    run_id: str | None = None
    workflow: WorkflowRef
    payload: Any
    plan: list[PlanRow]
    trace: list[Event]
    results: dict[str, Any]
    status: Annotated[RunStatus, Field(strict=False)]
    digests: Digests
    redacted: list[str] = Field(
        default_factory=list, description="Keys whose values were redacted."
    )
    timings: list[Timing] = Field(default_factory=list, description="Not canonical.")
    environment: dict[str, Any] = Field(default_factory=dict, description="Not canonical.")
    attempts: list[Attempt] = Field(default_factory=list, description="1.1; not canonical.")
    forked_from: ForkedFrom | None = Field(None, description="1.1; not canonical.")
    redaction: Redaction | None = Field(None, description="1.1; not canonical.")
    spec: dict[str, Any] | None = Field(
        None, description="1.1: the code-free spec of a graph defined in Python."
    )
    logs_omitted: str | None = Field(
        None, description="1.1: why the task logs were left out (they would not fit)."
    )
    scheduler: str | None = Field(
        None,
        description="1.1: the custom scheduler (module.Qualname) whose order the plan is, when "
        "it is not the deterministic one; the plan is then checked to be a topological order.",
    )
    unattributed_log: AttemptLog | None = Field(
        None,
        description="1.1: what threads wrote after the attempt that started them ended; "
        "not canonical.",
    )
    checksum: Digest = Field(description="sha256 of the canonical JSON of every other field.")
