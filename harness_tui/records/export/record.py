"""Run exports: a run as one JSON file that anyone can open, step through and replay.

:class:`RunRecord` is a run at rest: made from a run (:mod:`.writing`) or read from a file
(:mod:`.reading` checks it up to its checksum), then checked for internal consistency (the plan
re-derived from the embedded workflow and payload, trace task ids, digests, output digests,
claims outside the digests). Each failure is a :class:`RecordError` with one line saying what
is wrong. Writing is atomic (:func:`harness_tui.files.atomic_write_chunks`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from sys import intern
from typing import TYPE_CHECKING, Any

from ...engine.canonical import (
    check_json,
    combine_digests,
    digest,
    digest_text,
    object_text,
    payload_text,
)
from ...engine.capture import UNATTRIBUTED, AttemptLog
from ...engine.events import RUN_FAILING_STATUSES, RunStatus, Status, TraceEvent
from ...engine.orchestrator import Run
from ...engine.recorded_calls import Exchange
from ...engine.scheduler import DeterministicScheduler, Plan, SchedulerError, check_order
from ...engine.state import trace_digest
from ...files import FileError, atomic_write_chunks
from ...workflow.errors import WorkflowError
from ...workflow.limits import current
from ...workflow.loader import Workflow
from ...workflow.python_source import workflow_from_spec
from ..errors import RecordError
from .document import Results, Rows, plain, run_document
from .overrides import Override, add_overrides, overrides_of
from .redaction import REPLACEMENT, UNCHECKED, redact_document
from .views import (
    add_logs,
    array_claim,
    events_of,
    outputs_of,
    parse_embedded,
    plan_claim,
    with_stray,
)
from .writing import checksum, export_chunks, export_text, write_sealed

if TYPE_CHECKING:
    from .beside import Beside

__all__ = ["RunRecord"]

_PACKAGES = ("textual", "rich", "pyyaml", "click", "pydantic", "jmespath")


class RunRecord:
    """A run at rest. Build one with :meth:`from_run` or :meth:`read`."""

    def __init__(self, document: dict[str, Any], source_name: str = "<record>") -> None:
        self._doc = document  # a record made from a run: without its checksum until needed
        self.source_name = source_name
        self.lean = False
        """Read lean (:meth:`read`): the document's long arrays are let go."""
        self._plan_derived = False  # the plan was checked to be the one the payload gives
        self._marks: dict[str, bool] | None = None  # the redaction markers, once looked for
        self._array_claim: str | None = None  # a lean record's first wrong array claim
        self._derived: Plan | None = None  # the plan the workflow and payload give, once made
        self._made = False  # made from a run, whose arrays hold their claims by construction
        self.trace_digest_checked = False
        """Its trace digest is known to be its events' (checked when read, or its run's)."""

    # -- making -----------------------------------------------------------------------------

    @classmethod
    def from_run(
        cls,
        run: Run,
        workflow: Workflow,
        *,
        run_id: str | None = None,
        redact: Iterable[str] = (),
        status: str | None = None,
        forked_from: tuple[str, str] | None = None,
        environment: Mapping[str, Any] | None = None,
        overrides: Sequence[Override] = (),
    ) -> RunRecord:
        """Capture a run (finished or not) with its workflow.

        Args:
            run_id: the run's id in the store, if it has one.
            redact: keys whose values are taken out of the whole export (see
                :mod:`.redaction`).
            status: the run status to record instead of the run's own (a stored run's).
            forked_from: ``(run digest, task)`` of the run this one was re-run from.
            overrides: that re-run's what-if changes (export 1.3; redacted with ``redact``).
            environment: what to record as the environment (default: this interpreter's).
        """
        keys = frozenset(redact)
        outputs = run.output_texts()  # as of now, for the document and the outputs view
        document = run_document(
            run,
            workflow,
            run_id=run_id,
            status=status,
            forked_from=forked_from,
            environment=environment,
            outputs=outputs,
        )
        add_overrides(document, overrides, redacted=bool(keys))  # export 1.3, if any
        if keys:
            from .io_redaction import redact_recordings  # gzip and zlib: only when redacting

            document = plain(document)  # every value is looked at
            params = [node.params for node in workflow.graph.nodes.values()]
            known = [run.payload, workflow.payload, *params, run.results]
            document = redact_document(document, keys, [workflow.payload, *params])
            redact_recordings(document, keys, known)
        # The checksum is taken as the export is written (one pass over the run), or when
        # its text is first asked for (see _whole).
        record = cls(document)
        if keys:
            record._check_redacted_workflow()
        else:
            record._see_the_run(run, workflow, outputs)
        return record

    def _see_the_run(self, run: Run, workflow: Workflow, outputs: dict[str, str]) -> None:
        """Views that are the run's own, as of now (its events are the trace's rows, its
        ``outputs`` the document's results): nothing is made again from the document (a
        diff of two stored runs)."""
        document = self._doc
        if type(document["trace"]) is Rows:
            events = self.__dict__["events"] = list(document["trace"].source)
            self.__dict__["outputs"] = outputs
            self.__dict__["logs"] = with_stray(
                document["unattributed_log"], _ended_logs(events, run.logs())
            )
            plan = run.plan  # not itself: it holds the steps the plan's rows are made of
            self.__dict__["plan"] = Plan(
                plan.names, plan.task_ids, plan.levels, payload_text(document["payload"])
            )
            self._made = True
            self._plan_derived = run.plan_is_deterministic
            self.trace_digest_checked = True  # the run's own, of these events
        if document.get("spec") is None:  # the embedded source is this one's: its parse
            self.__dict__["workflow"] = workflow

    def _check_redacted_workflow(self) -> None:
        """A redacted export's workflow must still be one (else no reader could open it)."""
        try:
            self.workflow  # noqa: B018 - parsing is the check
        except WorkflowError as exc:
            keys = ", ".join(self.redacted)
            raise RecordError(
                f"cannot redact {keys}: a redacted value is also written where the workflow "
                f"needs it ({exc.problems[0].message})"
            ) from None

    def to_text(self) -> str:
        """The export's JSON text: ``format`` and ``format_version`` first, then sorted keys;
        two-space indent, UTF-8, final newline."""
        return export_text(self._whole())

    def write(self, path: str | Path) -> Path:
        """Write the export atomically; return the path. Task logs count against the
        reader's size limit: when they would take the export over it, they are left out (see
        :meth:`within`).

        Raises:
            RecordError: only the recorded calls take it over the reader's ``export_bytes``
                limit.
            FileError: over that limit all the same, which the reader would refuse.
        """
        self.write_within(path, current().export_bytes)
        return Path(path)

    def write_within(self, path: str | Path, limit: int) -> RunRecord:
        """Write the export (or, over ``limit``, the one :meth:`within` gives) atomically,
        as its text is made: a large run is never one string in memory. Returns the export
        written.

        Raises:
            RecordError, FileError: as :meth:`write`, or a value nested deeper than the
                reader reads (a task's output): not written.
        """
        self._refuse_what_the_reader_refuses(path)
        try:
            self._write(path, limit)
            return self
        except FileError:
            if not self.logs:
                self._refuse_recordings_over(limit)
                raise
        smaller = self._without_logs(limit)
        try:
            smaller._write(path, limit)
        except FileError:
            smaller._refuse_recordings_over(limit)
            raise
        return smaller

    def _write(self, path: str | Path, limit: int) -> None:
        """Write the export, its checksum taken on the way if it has none yet."""
        document = self._whole(sealed=False)
        if "checksum" in document:
            atomic_write_chunks(path, export_chunks(document), limit)
        else:
            document["checksum"] = write_sealed(path, document, limit)

    def _whole(self, *, sealed: bool = True) -> dict[str, Any]:
        """The whole document (a lean record has let its arrays go), with its checksum
        unless ``sealed`` is False (a record made from a run takes it when written)."""
        if self.lean:
            raise RuntimeError(
                f"{self.source_name} was read lean: its arrays are gone (read it whole)"
            )
        return self.document if sealed else self._doc

    @property
    def document(self) -> dict[str, Any]:
        """The export document (a lean record's without its long arrays), with its
        checksum (a record made from a run takes it as it is written, or here)."""
        self._doc = plain(self._doc)
        if "checksum" not in self._doc:
            self._doc["checksum"] = checksum(self._doc)
        return self._doc

    def _refuse_what_the_reader_refuses(self, path: str | Path) -> None:
        """An export whose free-form parts (a task's output, the payload) nest deeper or
        hold longer integers than the reader reads is refused before it is written: written,
        no one could open it."""
        from .reading import check_free_form, short_result

        document, limits = self._doc, current()
        texts = self.__dict__.get("outputs") if self._made else None  # the run's own
        results = document.get("results")
        if type(results) is Results:  # a run's: only the outputs that may be refused are read
            texts = results.texts
            short = short_result(limits)  # shorter texts the check skips: not even read
            long = {}
            if texts and max(map(len, texts.values())) > short:
                long = {task: json.loads(text) for task, text in texts.items() if len(text) > short}
            document = {**document, "results": long}
        try:
            check_free_form(document, str(path), limits, texts)
        except RecordError as exc:
            raise RecordError(f"{exc}: the reader would refuse it, so it is not written") from None

    def within(self, limit: int) -> tuple[RunRecord, str]:
        """This export and its text, or, when it is over ``limit`` bytes with task logs in
        it, the same export without the logs (``logs_omitted`` says why): logs are beside the
        trace, in no digest, and the first thing to give up for an export the reader opens."""
        self._refuse_what_the_reader_refuses("the export")
        text = self.to_text()
        if len(text.encode("utf-8")) <= limit:
            return self, text
        if not self.logs:
            self._refuse_recordings_over(limit)
            return self, text
        smaller = self._without_logs(limit)
        text = smaller.to_text()
        if len(text.encode("utf-8")) > limit:
            smaller._refuse_recordings_over(limit)
        return smaller, text

    def _without_logs(self, limit: int) -> RunRecord:
        """This export without its task logs, saying they took it over ``limit`` bytes."""
        document = dict(self._doc)
        document["attempts"] = [{**a, "log": None} for a in document.get("attempts") or []]
        document["unattributed_log"] = None
        document["logs_omitted"] = (
            f"the task logs took the export over the {limit:,}-byte limit of the reader"
        )
        document.pop("checksum", None)  # taken again, when it is written
        return RunRecord(document, self.source_name)

    def _refuse_recordings_over(self, limit: int) -> None:
        """An export over ``limit`` without logs to give up: with recorded calls it is refused
        (written without them, it could not be re-run offline)."""
        if self._doc.get("unattributed_io") is not None or any(
            a.get("io") for a in self._doc.get("attempts") or []
        ):
            raise RecordError(
                f"the recorded calls alone take the export over the {limit:,}-byte limit of "
                "the reader: not written (an export without them could not be re-run offline)"
            )

    # -- reading ----------------------------------------------------------------------------

    @classmethod
    def read(cls, path: str | Path, *, lean: bool = False) -> RunRecord:
        """Read and verify an export.

        Args:
            lean: keep the checked views (:attr:`events`, :attr:`logs`, :attr:`plan`,
                :attr:`outputs`) and let the document's trace, timings, attempts, plan and
                results go as soon as they are built, before the workflow is parsed: for a
                reader of the views only (replay, diff), some 290 MB less at 100,000 tasks. A
                lean record cannot be written and has no :attr:`recordings` or
                :attr:`results`.

        Raises:
            RecordError: one line saying what is wrong with the file.
        """
        if lean:
            from .beside import reading_beside

            with reading_beside([str(path)]) as (beside,):
                record = cls._lean(path, beside)
                record._check()
            return record
        from .reading import read_document

        return cls._checked(read_document(path), str(path))

    @classmethod
    def read_pair(cls, first: str | Path, second: str | Path) -> tuple[RunRecord, RunRecord]:
        """Two exports read lean (see :meth:`read`), with the first error that reading one
        after the other gives; the second file is read before the first's workflow is parsed,
        so that one parsed document is in memory at a time (a diff of two runs). Large files
        are read side by side in child processes (:mod:`.beside`).

        Raises:
            RecordError: one line saying what is wrong with the first file, else the second.
        """
        from .beside import reading_beside

        with reading_beside([str(first), str(second)]) as (beside_first, beside_second):
            one = cls._lean(first, beside_first)
            try:
                other = cls._lean(second, beside_second)
            except RecordError:
                one._check()  # the first file's own problem is the one reported
                raise
            one._check()
            if other._embeds_as(one):  # two runs of one workflow: its plan made once
                other._derived = one._derived
            other._check()
        return one, other

    @classmethod
    def parse(cls, text: str, name: str = "<record>") -> RunRecord:
        """Verify export text (see :meth:`read`)."""
        # The schema's pydantic models: imported when an export is read, never by a run
        # that only writes one (it starts in half the time).
        from .reading import parse_document

        return cls._checked(parse_document(text, name), name)

    @classmethod
    def _checked(cls, document: dict[str, Any], name: str) -> RunRecord:
        record = cls(document, name)
        record._check()
        return record

    @classmethod
    def _lean(cls, path: str | Path, beside: Beside | None = None) -> RunRecord:
        """The export in the file ``path`` read lean (see :meth:`read`), checked up to its
        checksum: a run of records at a time when this harness wrote it
        (:mod:`.streamed`), else whole, its arrays let go once its views are made.
        ``beside``: a child process reading it (:mod:`.beside`), whose answer is taken.

        Raises:
            RecordError: one line saying why the file cannot be read, or what is wrong in it.
        """
        from .beside import NOT_READ
        from .reading import document_of, read_bytes
        from .streamed import Lean, read_lean

        name = str(path)
        answer = NOT_READ if beside is None else beside.outcome()
        if isinstance(answer, RecordError):
            raise answer
        if isinstance(answer, Lean):
            lean = answer
        else:  # read here, or whole (the child found it not lean: the whole reader words why)
            holder = [read_bytes(path)]
            found = read_lean(holder[0], name) if answer is NOT_READ else None
            if found is None:
                record = cls(document_of(holder, name), name)
                record.let_arrays_go()
                return record
            holder.clear()
            lean = found
        record = cls(lean.document, name)
        record.lean = True
        record._marks = {}  # not redacted (a redacted export is read whole)
        record._array_claim = lean.claim
        views = {"events": lean.events, "logs": lean.logs, "plan": lean.plan}
        record.__dict__.update(views, outputs=lean.outputs)
        return record

    def _embeds_as(self, other: RunRecord) -> bool:
        """Whether this record embeds the workflow ``other`` does, the same parse (known
        without parsing it: a workflow that does not parse is reported by the check)."""
        return (
            self._doc["workflow"] == other._doc["workflow"]
            and self._doc.get("spec") is None
            and other._doc.get("spec") is None
        )

    def _check(self) -> None:
        self._check_consistency()
        self._check_claims()

    def let_arrays_go(self) -> RunRecord:
        """Keep the views only, as a record read lean (see :meth:`read`): build them, check what
        only the arrays show, and let the arrays go (a record made from a run then no longer
        holds the run). Returns the record."""
        self._redaction_marks()
        self._array_claim = None if self._made else self._array_claims()
        for view in ("events", "logs", "plan", "outputs"):
            getattr(self, view)
        arrays = ("trace", "timings", "attempts", "plan", "results")
        self._doc = {k: v for k, v in self._doc.items() if k not in arrays}
        self.lean = True
        return self

    def _redaction_marks(self) -> dict[str, bool]:
        """Which parts carry the redaction marker (looked for once, and only in a redacted
        export: the other skips nothing)."""
        if self._marks is None:
            self._marks = {}
            if self.unchecked:
                wf, payload = self._doc["workflow"], self.payload
                self._marks = {
                    "workflow-digest": _marked(wf["source"]),
                    "plan-from-payload": _marked(wf["source"]) or _marked(payload),
                    "payload-digest": _marked(payload),
                    "trace-digest": _marked(self._doc["trace"]),
                    "results-digest": _marked(self._doc["results"]),
                }
        return self._marks

    def _check_consistency(self) -> None:
        name = self.source_name
        wf = self._doc["workflow"]
        source, payload = wf["source"], self.payload
        # A check a redaction skips is excused only where a redacted value really is gone:
        # its part carries the marker (a redacted export lists every check as unchecked, so
        # the list alone proves nothing; an edited value without a marker stays an edit).
        excused = self._redaction_marks()
        skip = frozenset(check for check in self.unchecked if excused.get(check, True))
        if "workflow-digest" not in skip and digest_text(source) != wf["digest"]:
            raise RecordError(f"{name}: embedded workflow does not match its digest")
        try:
            workflow = self.workflow
        except WorkflowError as exc:
            raise RecordError(f"{name}: embedded workflow is invalid: {exc.problems[0]}") from None
        digests = self._doc["digests"]
        if "workflow-digest" not in skip and workflow.digest != wf["digest"]:
            raise RecordError(f"{name}: embedded workflow does not match its digest")
        recorded_plan = self.plan
        if recorded_plan.digest != digests["plan"]:
            raise RecordError(f"{name}: plan does not match its digest")
        if "plan-from-payload" not in skip:
            self._check_plan(workflow, recorded_plan)
        if "payload-digest" not in skip and digest(payload) != digests["payload"]:
            raise RecordError(f"{name}: payload does not match its digest")
        self._check_trace(skip)
        outputs = self.outputs
        for event in self.events:
            if event.output_digest is None:
                continue
            if event.task not in outputs:  # redaction replaces values, never removes them
                raise RecordError(f"{name}: result of {event.task!r} is missing")
            text = outputs[event.task]
            unchecked = "output-digests" in skip and REPLACEMENT in text
            if not unchecked and digest_text(text) != event.output_digest:
                raise RecordError(
                    f"{name}: result of {event.task!r} does not match its output digest"
                )
        if "results-digest" not in skip and digest_text(object_text(outputs)) != digests["results"]:
            raise RecordError(f"{name}: results do not match their digest")
        parts = {k: digests[k] for k in ("payload", "plan", "results", "trace")}
        if combine_digests(parts) != digests["run"]:
            raise RecordError(f"{name}: run digest does not match its parts")

    def _check_trace(self, skip: frozenset[str]) -> None:
        name = self.source_name
        plan = self.plan
        task_ids = dict(zip(plan.names, plan.task_ids, strict=True))
        events = self.events
        for position, event in enumerate(events):
            if event.seq != position:
                raise RecordError(f"{name}: trace event {position} has seq {event.seq}")
            if task_ids.get(event.task) != event.task_id:
                raise RecordError(
                    f"{name}: trace event {event.seq} ({event.task!r}) does not match the plan"
                )
        if "trace-digest" not in skip:
            if trace_digest(events) != self.digests["trace"]:
                raise RecordError(f"{name}: trace does not match its digest (the trace was edited)")
            self.trace_digest_checked = True

    def _check_claims(self) -> None:
        """The fields outside the digests must not contradict the trace: plan indexes, the
        sequence numbers of timings, and the run status."""
        name = self.source_name
        wrong = self._array_claim if self.lean else self._array_claims()
        if wrong is not None:
            raise RecordError(f"{name}: {wrong}")
        redaction = self._doc.get("redaction")
        if redaction is not None and sorted(redaction["keys"]) != sorted(self.redacted):
            raise RecordError(f"{name}: redaction keys differ from the redacted keys")
        claimed = self._doc["status"]
        derived = _possible_statuses(self.events, self.plan.names)
        if claimed not in derived:
            allowed = " or ".join(sorted(derived))
            raise RecordError(
                f"{name}: status {claimed!r} contradicts the trace (it allows {allowed})"
            )

    def _array_claims(self) -> str | None:
        """What is wrong with the plan indexes, the timings' sequence numbers or the attempts
        (the first of them), or None."""
        return array_claim(
            plan_claim(self._doc["plan"]),
            (timing["seq"] for timing in self._doc.get("timings", [])),
            self.events,
            ((a["task"], a["attempt"]) for a in self._doc.get("attempts") or []),
        )

    # -- views ------------------------------------------------------------------------------

    @cached_property
    def workflow(self) -> Workflow:
        """The embedded workflow (parsed; no code is imported).

        Raises:
            RecordError: its recorded path cannot be a path (a NUL in it...).
            WorkflowError: the embedded source is not a valid workflow.
        """
        wf = self._doc["workflow"]
        spec = self._doc.get("spec")
        if spec is not None:  # defined in Python: rebuilt from its code-free spec
            if check_json(spec) != wf["source"]:
                raise RecordError(f"{self.source_name}: the spec does not match its workflow")
            skipped = {e.task for e in self.events if e.status is Status.SKIPPED}
            return workflow_from_spec(spec, wf["path"], skipped)
        return parse_embedded(wf, self.source_name)  # one parse for two runs

    @property
    def overrides(self) -> tuple[Override, ...]:
        """The what-if changes of the re-run this record is (export 1.3; none before)."""
        return overrides_of(self._doc)

    @property
    def logs_omitted(self) -> str | None:
        """Why the task logs were left out of the export written (see :meth:`within`)."""
        value = self._doc.get("logs_omitted")
        return value if isinstance(value, str) else None

    @property
    def payload(self) -> Any:
        return self._doc["payload"]

    @property
    def redacted(self) -> list[str]:
        return list(self._doc.get("redacted") or [])

    @property
    def unchecked(self) -> list[str]:
        """The reader's checks this export skips because they need redacted content: those
        its ``redaction`` lists (of :data:`~.redaction.UNCHECKED`); for a redacted export
        written before ``redaction.unchecked`` existed, the ones it could not pass."""
        if not self.redacted:
            return []
        redaction = self._doc.get("redaction") or {}
        listed = redaction.get("unchecked")
        if isinstance(listed, list):
            return [check for check in UNCHECKED if check in listed]
        return ["plan-from-payload", "payload-digest", "output-digests", "results-digest"]

    @property
    def status(self) -> str:
        return str(self._doc["status"])

    @property
    def digests(self) -> dict[str, str]:
        return dict(self._doc["digests"])

    @property
    def run_id(self) -> str | None:
        value = self._doc.get("run_id")
        return str(value) if value is not None else None

    def _check_plan(self, workflow: Workflow, recorded: Plan) -> None:
        """The plan follows from the workflow and payload: it is the deterministic plan, or,
        when a custom scheduler chose it (``scheduler``), a topological order of the graph
        with the task ids and levels that follow."""
        name = self.source_name
        derived = self._derived
        if derived is None or derived.payload_text != recorded.payload_text:
            derived = self._derived = DeterministicScheduler(workflow.graph).plan(self.payload)
        custom = self.scheduler
        if custom is None:
            if derived != recorded:
                raise RecordError(f"{name}: plan does not match the embedded workflow and payload")
            self._plan_derived = True
            return
        try:
            check_order(workflow.graph, recorded.names, custom)
        except SchedulerError as exc:
            raise RecordError(f"{name}: plan is no order of the embedded workflow: {exc}") from None
        ids = dict(zip(derived.names, derived.task_ids, strict=True))
        levels: dict[str, int] = {}
        graph = workflow.graph.nodes
        for task, task_id, level in zip(recorded.names, recorded.task_ids, recorded.levels,
                                         strict=True):  # fmt: skip
            levels[task] = max((levels[d] + 1 for d in graph[task].depends_on), default=0)
            if task_id != ids[task] or level != levels[task]:
                raise RecordError(f"{name}: plan row {task!r} does not match the payload")

    @property
    def plan_derived(self) -> bool:
        """The recorded plan was checked to be the one the workflow and payload give."""
        return self._plan_derived

    @property
    def scheduler(self) -> str | None:
        """The custom scheduler that chose the plan's order (None: the deterministic one)."""
        value = self._doc.get("scheduler")
        return value if isinstance(value, str) else None

    @cached_property
    def plan(self) -> Plan:
        rows = self._doc["plan"]
        text = payload_text(self.payload)
        return Plan(
            tuple(intern(r["task"]) for r in rows),  # as the events' (views.events_of)
            tuple(intern(r["task_id"]) for r in rows),
            tuple(r["level"] for r in rows),
            text,
        )

    @cached_property
    def events(self) -> list[TraceEvent]:
        timings = {t["seq"]: t for t in self._doc.get("timings", [])}
        return events_of(self._doc["trace"], timings)

    @cached_property
    def logs(self) -> dict[tuple[str, int], AttemptLog]:
        """What each ``(task, attempt)`` printed or logged (export 1.1; empty for 1.0), and
        what threads wrote after their attempt ended under ``UNATTRIBUTED``."""
        found: dict[tuple[str, int], AttemptLog] = {}
        add_logs(found, self._doc.get("attempts") or [])
        return with_stray(self._doc.get("unattributed_log"), found)

    @cached_property
    def recordings(self) -> dict[tuple[str, int], list[Exchange]]:
        """What the outside world answered each ``(task, attempt)`` (export 1.2; empty before),
        the exchanges of threads outside any attempt under ``UNATTRIBUTED``.

        Raises:
            RecordError: a recorded exchange is malformed (one line names it).
        """
        found: dict[tuple[str, int], list[Exchange]] = {}
        attempts = self._whole().get("attempts") or []
        try:
            stray = self._doc.get("unattributed_io") or []
            if stray:
                found[UNATTRIBUTED] = [
                    Exchange.from_json(e, f"unattributed_io[{i}]") for i, e in enumerate(stray)
                ]
            for index, attempt in enumerate(attempts):
                exchanges = attempt.get("io") or []
                if exchanges:
                    found[(attempt["task"], attempt["attempt"])] = [
                        Exchange.from_json(e, f"attempts[{index}].io[{i}]")
                        for i, e in enumerate(exchanges)
                    ]
        except ValueError as exc:
            raise RecordError(f"{self.source_name}: {exc}") from None
        return found

    @cached_property
    def outputs(self) -> dict[str, str]:
        """Each committed output as canonical JSON text."""
        return outputs_of(self._doc["results"])

    @property
    def results(self) -> dict[str, Any]:
        return dict(self._whole()["results"])


def _ended_logs(
    events: list[TraceEvent], logs: Mapping[tuple[str, int], AttemptLog]
) -> dict[tuple[str, int], AttemptLog]:
    """The logs view of a run's ``events`` (see :attr:`RunRecord.logs`): what each attempt
    that ended wrote, in the order the attempts ended, from the run's ``logs``, without
    making the attempts' records."""
    found: dict[tuple[str, int], AttemptLog] = {}
    if logs:
        running = Status.RUNNING
        for event in events:
            if event.attempt and event.status is not running:
                key = (event.task, event.attempt)
                log = logs.get(key)
                if log is not None and (log.text or log.truncated):
                    found[key] = AttemptLog(log.text, bool(log.truncated))
    return found


def _marked(value: Any) -> bool:
    """Whether ``value`` (text, or JSON data) carries the redaction marker somewhere."""
    return REPLACEMENT in (value if isinstance(value, str) else json.dumps(value))


def _possible_statuses(events: list[TraceEvent], names: Iterable[str]) -> frozenset[str]:
    """The run statuses a trace allows: ``pending`` before any event; ``running`` while a
    task has no final event; at the end ``succeeded`` or ``failed`` by the tasks' final
    statuses, or ``cancelled`` (stopped by the user)."""
    if not events:
        return frozenset({RunStatus.PENDING.value, RunStatus.RUNNING.value})
    final = {event.task: event.status for event in events}
    if any(final.get(task) in (None, Status.RUNNING) for task in names):
        return frozenset({RunStatus.RUNNING.value, RunStatus.CANCELLED.value})
    failed = any(status in RUN_FAILING_STATUSES for status in final.values())
    ending = RunStatus.FAILED if failed else RunStatus.SUCCEEDED
    return frozenset({ending.value, RunStatus.CANCELLED.value})
