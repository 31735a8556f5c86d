"""Adversarial reads of exports beside a child process (:mod:`.beside`): every shape of export,
broken files, hostile last members, a file replaced under the reader, children that
misbehave, limits, paths and resource hygiene. A record read beside is the record read here,
with the same first error."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.engine.recorded_calls import CallMode, CallSession
from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export import beside as beside_module
from harness_tui.records.export.beside import NOT_READ, Beside
from harness_tui.records.export.streamed import Lean
from harness_tui.records.export.writing import checksum, export_text
from harness_tui.workflow.loader import Workflow, load_workflow
from harness_tui.workflow.python_source import load_python

ROOT = Path(__file__).resolve().parents[2]

# -- exports of many shapes, made with the project's own API --------------------------------

RECORDING_TASKS = """
def roll(inputs):
    return inputs["io"].call("dice", lambda token: 4, inputs["payload"]["token"])


def echo(inputs):
    print("y" * inputs["payload"]["size"])
    return inputs["io"].call("echo", lambda text: text, "x" * inputs["payload"]["size"])
"""

RECORDING_FLOW = """
name: dice
payload: {token: tok-secret-1, size: 10}
tasks:
  roll: {run: "beside_adversarial_tasks:roll"}
  echo: {run: "beside_adversarial_tasks:echo", depends_on: [roll]}
"""

UNICODE_FLOW = """
# répertoire: 任务 — ünïcödé (task names are ASCII; the rest need not be)
name: taches
payload: {mot: "été", 数: 3}
tasks:
  tache_e: {run: "builtin:echo", with: {texte: "ça va ✓ 🎉"}}
  renwu: {run: "builtin:echo", depends_on: [tache_e], with: {v: "中文"}}
"""

FLOW_STYLE = '{name: flow, payload: {n: 1}, tasks: {a: {run: "builtin:echo"}, b: {run: "builtin:echo", depends_on: [a]}}}\n'  # noqa: E501


class _Reversed(DeterministicScheduler):
    """A custom scheduler (its own class) choosing the deterministic order."""

    def build_plan(self, payload: Any) -> list[str]:
        return list(reversed(super().build_plan(payload)))[::-1]


def _run(workflow: Workflow, steps: int | None = None, **options: Any) -> Any:
    calls = options.pop("calls", None)
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure, **options
    )
    run = orchestrator.start(workflow.payload, calls=calls)
    if steps is None:
        return run.run_to_end()
    for _ in range(steps):
        run.step()
    return run


def _text(record: RunRecord) -> str:
    return record.to_text()


def _document_text(document: dict[str, Any]) -> str:
    return export_text({**document, "checksum": checksum(document)})


def _resealed(text: str, edit: Callable[[dict[str, Any]], Any]) -> str:
    document = json.loads(text)
    document.pop("checksum")
    edit(document)
    return _document_text(document)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Export texts, by name: sound ones of many shapes and broken ones."""
    folder = tmp_path_factory.mktemp("shapes")
    (folder / "beside_adversarial_tasks.py").write_text(RECORDING_TASKS, encoding="utf-8")
    (folder / "dice.yaml").write_text(RECORDING_FLOW, encoding="utf-8")
    (folder / "unicode ✓.yaml").write_text(UNICODE_FLOW, encoding="utf-8")
    (folder / "flow.yaml").write_text(FLOW_STYLE, encoding="utf-8")
    texts: dict[str, str] = {}
    triage = load_workflow(ROOT / "workflows/agent_triage.yaml")
    done = _run(triage)
    texts["triage"] = _text(RunRecord.from_run(done, triage))
    texts["triage-redacted"] = _text(RunRecord.from_run(done, triage, redact=["customer"]))
    texts["triage-custom-scheduler"] = _text(
        RunRecord.from_run(_run(triage, scheduler=_Reversed(triage.graph)), triage)
    )
    partial = _run(triage, steps=3)
    texts["triage-partial"] = _text(RunRecord.from_run(partial, triage))
    partial.cancel()
    texts["triage-cancelled"] = _text(RunRecord.from_run(partial, triage, status="cancelled"))
    texts["triage-empty"] = _text(RunRecord.from_run(_run(triage, steps=0), triage))
    dice = load_workflow(folder / "dice.yaml")
    recorded = _run(dice, calls=CallSession(CallMode.LIVE))
    texts["recorded-calls"] = _text(RunRecord.from_run(recorded, dice))
    texts["recorded-calls-redacted"] = _text(RunRecord.from_run(recorded, dice, redact=["token"]))
    python = load_python(str(ROOT / "workflows/user_profile.py") + ":build_harness")
    texts["python-spec"] = _text(RunRecord.from_run(_run(python), python))
    unicode = load_workflow(folder / "unicode ✓.yaml")
    texts["non-ascii"] = _text(RunRecord.from_run(_run(unicode), unicode))
    flow = load_workflow(folder / "flow.yaml")
    texts["flow-style-source"] = _text(RunRecord.from_run(_run(flow), flow))
    texts["compact-json"] = json.dumps(json.loads(texts["triage"]))
    texts["compact-ascii"] = json.dumps(json.loads(texts["non-ascii"]), separators=(",", ":"))
    texts["bom"] = "\ufeff" + texts["triage"]

    def path(value: str) -> Callable[[dict[str, Any]], None]:
        def edit(d: dict[str, Any]) -> None:
            d["workflow"]["path"] = value

        return edit

    texts["nul-workflow-path"] = _resealed(texts["triage"], path("flows/a\x00b.yaml"))
    texts["dotdot-workflow-path"] = _resealed(texts["triage"], path("../../../../etc/x.yaml"))
    texts["string-workflow-path"] = _resealed(texts["triage"], path("<string>"))
    # Broken ones.
    triage_text = texts["triage"]

    def plan_index(d: dict[str, Any]) -> None:
        d["plan"][1]["index"] = 0

    def trace(d: dict[str, Any]) -> None:
        d["trace"][0]["input_digest"] = "0" * 64

    def status(d: dict[str, Any]) -> None:
        d["status"] = "failed"

    def source(d: dict[str, Any]) -> None:
        d["workflow"]["source"] += "\n# edited\n"

    def invalid(d: dict[str, Any]) -> None:
        from harness_tui.engine.canonical import digest_text

        d["workflow"]["source"] = "name: x\ntasks: [\n"
        d["workflow"]["digest"] = digest_text(d["workflow"]["source"])

    def unknown_last(d: dict[str, Any]) -> None:
        d["zzz"] = {"workflow": {"source": "name: y\ntasks: {}\n", "path": "y.yaml"}}

    for name, edit in (
        ("broken-plan-index", plan_index), ("broken-trace", trace), ("broken-status", status),
        ("broken-source-digest", source), ("broken-invalid-workflow", invalid),
        ("unknown-member-after-workflow", unknown_last),
    ):  # fmt: skip
        texts[name] = _resealed(triage_text, edit)
    texts["broken-checksum"] = triage_text.replace('"status": "', '"status": "x', 1)
    texts["broken-truncated"] = triage_text[: len(triage_text) // 2]
    texts["broken-empty"] = ""
    texts["broken-not-export"] = "{}\n"
    texts["broken-tail-only"] = '{\n  "workflow": {"source": "name: x", "path": "x"}\n}\n'
    return texts


# -- reading beside and here -----------------------------------------------------------------


@contextlib.contextmanager
def _here(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No child inside the block."""
    with monkeypatch.context() as patch:
        patch.setattr(beside_module, "BESIDE_BYTES", 1 << 60)
        yield


def _views(record: RunRecord) -> dict[str, Any]:
    return {
        "document": record.document, "events": record.events, "logs": list(record.logs.items()),
        "plan": record.plan, "outputs": list(record.outputs.items()), "digests": record.digests,
        "claim": record._array_claim, "derived": record.plan_derived,
        "trace_checked": record.trace_digest_checked, "lean": record.lean,
        "status": record.status, "workflow_digest": record.workflow.digest,
    }  # fmt: skip


def _outcome(read: Callable[[], Any]) -> Any:
    """What a read gives: the views of its records, or its exception's type and line."""
    try:
        result = read()
        if isinstance(result, tuple):
            return ("pair", *(_views(record) for record in result))
        return ("read", _views(result))
    except Exception as exc:  # any exception is compared (a view that cannot be made too)
        return ("raised", type(exc).__name__, str(exc))


def _same_beside_and_here(
    read: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any]:
    beside = _outcome(read)
    with _here(monkeypatch):
        here = _outcome(read)
    return beside, here


def _children() -> set[int]:
    """The process ids of this process's living children."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Beside]:
    """Every child started, in order."""
    made: list[Beside] = []
    start = Beside.__init__

    def recorded(self: Beside, path: str, name: str) -> None:
        start(self, path, name)
        made.append(self)

    monkeypatch.setattr(Beside, "__init__", recorded)
    return made


def _all_ended(children: list[Beside]) -> bool:
    return all(
        child.process is None
        or (child.process.returncode is not None and child.process.stdout.closed)  # type: ignore[union-attr]
        for child in children
    )


SOUND = [
    "triage", "triage-redacted", "triage-custom-scheduler", "triage-partial",
    "triage-cancelled", "triage-empty", "recorded-calls", "recorded-calls-redacted",
    "python-spec", "non-ascii", "flow-style-source", "compact-json", "compact-ascii", "bom",
    "dotdot-workflow-path", "string-workflow-path", "unknown-member-after-workflow",
]  # fmt: skip
BROKEN = [
    "nul-workflow-path", "broken-plan-index", "broken-trace", "broken-status",
    "broken-source-digest", "broken-invalid-workflow", "broken-checksum", "broken-truncated",
    "broken-empty", "broken-not-export", "broken-tail-only",
]  # fmt: skip


@pytest.mark.parametrize("shape", SOUND + BROKEN)
def test_a_read_beside_is_the_read_here(
    shapes: dict[str, str], shape: str, tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, started: list[Beside],
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes[shape], encoding="utf-8")
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert len(answers) == (1 if shapes[shape] else 0)  # an empty file is read here
    assert beside == here
    assert (beside[0] == "read") == (shape in SOUND)
    if beside[0] == "raised":
        assert beside[1] == "RecordError"
    assert _all_ended(started)


@pytest.mark.parametrize(
    ("first", "second"),
    [("triage", "python-spec"), ("broken-trace", "triage-redacted"),
     ("broken-truncated", "broken-status"), ("non-ascii", "broken-checksum"),
     ("flow-style-source", "recorded-calls"), ("bom", "triage-cancelled"),
     ("nul-workflow-path", "broken-empty"), ("triage-custom-scheduler", "triage"),
     ("broken-invalid-workflow", "broken-plan-index")],
)  # fmt: skip
def test_a_pair_read_beside_is_the_pair_read_here_in_both_orders(
    shapes: dict[str, str], first: str, second: str, tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, started: list[Beside],
) -> None:  # fmt: skip
    (tmp_path / "a.json").write_text(shapes[first], encoding="utf-8")
    (tmp_path / "b.json").write_text(shapes[second], encoding="utf-8")
    for a, b in (("a.json", "b.json"), ("b.json", "a.json")):
        pair = (tmp_path / a, tmp_path / b)
        beside, here = _same_beside_and_here(lambda: RunRecord.read_pair(*pair), monkeypatch)
        assert beside == here, (a, b)
        with _here(monkeypatch):
            apart = _outcome(lambda: (RunRecord.read(pair[0], lean=True),
                                      RunRecord.read(pair[1], lean=True)))  # fmt: skip
        assert beside == apart
    assert len(started) == 2 * sum(1 for n in (first, second) if shapes[n]) and _all_ended(started)
    assert answers  # a child was asked at least once


# -- the workflow peeked at: never harm ------------------------------------------------------


def _peeks(monkeypatch: pytest.MonkeyPatch) -> list[Workflow | None]:
    """What each peek gave."""
    given: list[Workflow | None] = []
    peek = beside_module._embedded_workflow

    def recorded(path: str, name: str) -> Workflow | None:
        workflow = peek(path, name)
        given.append(workflow)
        return workflow

    monkeypatch.setattr(beside_module, "_embedded_workflow", recorded)
    return given


def _hostile_tails() -> dict[str, str]:
    deep = "[" * 50_000 + "]" * 50_000
    return {
        "deep": '{\n  "format": 1,\n  "workflow": ' + deep + "\n}\n",
        "not-json": '{\n  "format": 1,\n  "workflow": {"source": nope\n}\n',
        "planted-in-string": '{\n  "format": "x\\n  \\"workflow\\": {}",\n  "workflow": 3\n}\n',
        "source-not-str": '{\n  "workflow": {"source": 1, "path": "p"}\n}\n',
        "path-not-str": '{\n  "workflow": {"source": "name: a", "path": null}\n}\n',
        "bomb": '{\n  "workflow": '
        + json.dumps(
            {"source": "a: &a [x,x,x,x,x,x,x,x]\n" + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
                f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
                for i in range(8)
            ), "path": "../../bomb.yaml"}
        )
        + "\n}\n",
        "surrogate": '{\n  "workflow": {"source": "name: \\ud800", "path": "p.yaml"}\n}\n',
    }  # fmt: skip


@pytest.mark.parametrize("tail", sorted(_hostile_tails()))
def test_a_hostile_last_member_gives_the_error_a_read_here_does(
    tail: str, tmp_path: Path, answers: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(_hostile_tails()[tail], encoding="utf-8")
    peeks = _peeks(monkeypatch)
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert beside == here and beside[1] == "RecordError"
    assert peeks == [None]  # nothing held for a member that is no workflow of this harness


def test_a_planted_workflow_member_parsed_ahead_is_never_the_record_s(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """An unknown member after the workflow holding a workflow of its own, laid out as the
    last member: the peek may parse it, the record keeps its own."""
    document = json.loads(shapes["triage"])
    document.pop("checksum")
    planted = {"source": "name: planted\ntasks:\n  z: {run: 'builtin:echo'}\n", "path": "p.yaml"}
    text = _document_text(document)[: -len("\n}\n")]
    text += ',\n  "workflow": ' + json.dumps(planted) + "\n}\n"  # a key given twice
    path = tmp_path / "planted.json"
    path.write_text(text, encoding="utf-8")
    peeks = _peeks(monkeypatch)
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert beside == here
    assert peeks and peeks[0] is not None and list(peeks[0].graph.nodes) == ["z"]


_WAITING_CHILD = (
    "import gc, json, os, sys, time\n"
    "sys.path[:] = json.loads(sys.argv[1])\n"
    "gc.set_threshold(*json.loads(sys.argv[2]))\n"
    "sys.set_int_max_str_digits(int(sys.argv[3]))\n"
    "go = sys.argv[5] + '.go'\n"
    "while not os.path.exists(go):\n"
    "    time.sleep(0.005)\n"
    "from harness_tui.records.export.beside import serve\n"
    "serve(sys.argv[4], sys.argv[5])\n"
)
"""A child that reads the file only once ``<path>.go`` exists."""


@pytest.mark.parametrize(("before", "after"), [("triage", "non-ascii"), ("non-ascii", "triage"),
                                               ("triage", "triage-custom-scheduler"),
                                               ("triage", "broken-source-digest")])  # fmt: skip
def test_a_file_replaced_between_the_peek_and_the_child_s_read_is_read_as_replaced(
    shapes: dict[str, str], before: str, after: str, tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes[before], encoding="utf-8")
    peek = beside_module._embedded_workflow
    peeked: list[Workflow | None] = []

    def peek_then_replace(file: str, name: str) -> Workflow | None:
        workflow = peek(file, name)
        peeked.append(workflow)
        replacement = tmp_path / "next.json"
        replacement.write_text(shapes[after], encoding="utf-8")
        os.replace(replacement, path)  # atomically, as a writer of exports does
        Path(name + ".go").touch()  # only now does the child read
        return workflow

    monkeypatch.setattr(beside_module, "_CHILD", _WAITING_CHILD)
    monkeypatch.setattr(beside_module, "_embedded_workflow", peek_then_replace)
    beside = _outcome(lambda: RunRecord.read(path, lean=True))
    assert type(answers[0]) in (Lean, RecordError) or answers[0] is None
    assert peeked[0] is not None
    with _here(monkeypatch):
        here = _outcome(lambda: RunRecord.read(path, lean=True))
    assert beside == here
    if beside[0] == "read":
        record = RunRecord.read(path, lean=True)
        embedded = (json.loads(shapes[before])["workflow"], json.loads(shapes[after])["workflow"])
        same = embedded[0]["source"] == embedded[1]["source"]
        same = same and embedded[0]["path"] == embedded[1]["path"]
        # Another source is parsed again; the same one is the parse made ahead.
        assert (record.workflow is peeked[0]) == same


def test_a_file_replaced_with_the_same_workflow_reuses_the_parse(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The same source and path: the parse made ahead is the very one needed (another run of
    the same workflow), and the record is the replacement's."""
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    peek = beside_module._embedded_workflow
    peeked: list[Workflow | None] = []
    records: list[RunRecord] = []

    def peek_then_replace(file: str, name: str) -> Workflow | None:
        workflow = peek(file, name)
        peeked.append(workflow)
        (tmp_path / "next.json").write_text(shapes["triage-partial"], encoding="utf-8")
        os.replace(tmp_path / "next.json", path)
        Path(name + ".go").touch()
        return workflow

    monkeypatch.setattr(beside_module, "_CHILD", _WAITING_CHILD)
    monkeypatch.setattr(beside_module, "_embedded_workflow", peek_then_replace)
    records.append(RunRecord.read(path, lean=True))
    assert type(answers[0]) is Lean
    assert records[0].workflow is peeked[0]
    with _here(monkeypatch):
        here = RunRecord.read(path, lean=True)
    assert _views(records[0]) == _views(here)
    assert records[0].status == "running"


def test_the_peek_reads_no_more_than_the_reader_may(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    def padded(d: dict[str, Any]) -> None:
        d["workflow"]["source"] += "#" + "pad " * 5000 + "\n"  # a 20 kB last member

    path = tmp_path / "run.json"
    path.write_text(_resealed(shapes["triage"], padded), encoding="utf-8")
    limit = 4096
    monkeypatch.setenv("HARNESS_TUI_LIMITS", f"export_bytes={limit}")
    decoded: list[int] = []

    def loads(text: Any, **kwargs: Any) -> Any:
        decoded.append(len(text))
        return json.loads(text, **kwargs)

    monkeypatch.setattr(beside_module, "json", types.SimpleNamespace(loads=loads, dumps=json.dumps))
    with pytest.raises(RecordError, match="over the 4,096-byte limit"):
        RunRecord.read(path, lean=True)
    assert max(decoded, default=0) <= limit


def test_a_workflow_path_through_a_symlink_loop_does_no_harm_beside(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    looping = str(tmp_path / "loop" / "flow.yaml")

    def edit(d: dict[str, Any]) -> None:
        d["workflow"]["path"] = looping

    text = _resealed(shapes["triage"], edit).replace('"status": "', '"status": "x', 1)
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert here[:2] == ("raised", "RecordError")  # its status is no status
    assert beside == here


def test_a_workflow_path_through_a_symlink_loop_is_one_line(
    shapes: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    looping = str(tmp_path / "loop" / "flow.yaml")

    def edit(d: dict[str, Any]) -> None:
        d["workflow"]["path"] = looping

    path = tmp_path / "run.json"
    path.write_text(_resealed(shapes["triage"], edit), encoding="utf-8")
    with _here(monkeypatch), pytest.raises(RecordError, match="not a usable path"):
        RunRecord.read(path, lean=True)


# -- children that misbehave -----------------------------------------------------------------


def _answer(value: Any) -> str:
    """A child that answers ``value`` (pickled) and exits 0."""
    data = pickle.dumps(value)
    return f"import sys; sys.stdout.buffer.write({data!r})"


def _lean_of(text: str, tmp_path: Path) -> Lean:
    from harness_tui.records.export.streamed import read_lean

    lean = read_lean(text.encode(), str(tmp_path / "run.json"))
    assert lean is not None
    return lean


def _misbehaving(text: str, tmp_path: Path) -> dict[str, str]:
    import dataclasses

    lean = _lean_of(text, tmp_path)
    columns = tuple(zip(*lean.events, strict=True))
    empty = dataclasses.replace(lean, events=[])
    return {
        "exit-1": "import sys; sys.exit(1)",
        "killed": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
        "junk": "import sys; sys.stdout.buffer.write(b'\\x80\\x05junk' * 1000)",
        "nothing": "pass",
        "answer-then-fail": _answer(("lean", empty, columns))[:-1]
        + "); sys.stdout.flush(); sys.exit(5)",
        "two-tuple": _answer(("lean", empty)),
        "four-tuple": _answer(("lean", empty, columns, None)),
        "not-a-tuple": _answer({"kind": "lean"}),
        "unknown-kind": _answer(("maybe", None, None)),
        "error-not-str": _answer(("error", 3, None)),
        "lean-subclass-of-tuple": _answer(("lean", (1, 2), columns)),
        "ragged-columns": _answer(("lean", empty, (columns[0], columns[1][:-1]))),
        "short-columns": _answer(("lean", empty, columns[:3])),
        "columns-not-tuples": _answer(("lean", empty, 42)),
        "truncated-pickle": "import sys; sys.stdout.buffer.write("
        + repr(pickle.dumps(("lean", empty, columns))[:-7])
        + ")",
    }  # fmt: skip


@pytest.mark.parametrize(
    "child",
    ["exit-1", "killed", "junk", "nothing", "answer-then-fail", "two-tuple", "four-tuple",
     "not-a-tuple", "unknown-kind", "error-not-str", "lean-subclass-of-tuple",
     "ragged-columns", "short-columns", "columns-not-tuples", "truncated-pickle"],
)  # fmt: skip
def test_a_child_that_misbehaves_leaves_the_right_record(
    shapes: dict[str, str], child: str, tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, started: list[Beside],
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    monkeypatch.setattr(beside_module, "_CHILD", _misbehaving(shapes["triage"], tmp_path)[child])
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert answers == [NOT_READ]
    assert beside == here and beside[0] == "read"
    assert _all_ended(started)


def test_a_child_that_says_whole_of_a_sound_file_leaves_it_read_whole(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    monkeypatch.setattr(beside_module, "_CHILD", _answer(("whole", None, None)))
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert answers == [None]
    assert beside == here


def test_a_child_that_hangs_is_waited_for(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, started: list[Beside],
) -> None:  # fmt: skip
    """No timeout: the parent waits for its child's answer as long as the child takes (a
    child that never answers blocks the read). Here it answers after a while, and is used."""
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    monkeypatch.setattr(beside_module, "_CHILD", _WAITING_CHILD)
    finished = threading.Event()
    outcome: list[Any] = []

    def read() -> None:
        outcome.append(_outcome(lambda: RunRecord.read(path, lean=True)))
        finished.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert not finished.wait(0.5)  # still waiting for the child
    Path(str(path) + ".go").touch()
    reader.join()
    assert type(answers[0]) is Lean
    with _here(monkeypatch):
        assert outcome[0] == _outcome(lambda: RunRecord.read(path, lean=True))
    assert _all_ended(started)


# -- limits ------------------------------------------------------------------------------------


def _deep_payload(d: dict[str, Any]) -> None:
    value: Any = 1
    for _ in range(40):
        value = [value]
    d["environment"]["deep"] = value  # free-form, in no digest


def _long_int(d: dict[str, Any]) -> None:
    d["environment"]["big"] = int("9" * 60)


@pytest.mark.parametrize(
    ("limits", "edit", "refused"),
    [("export_depth=30", _deep_payload, True), ("export_depth=60", _deep_payload, False),
     ("int_digits=50", _long_int, True), ("int_digits=70", _long_int, False),
     ("export_bytes=2000", None, True), ("export_depth=2", None, True)],
)  # fmt: skip
def test_limits_apply_to_the_child_as_here(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, limits: str, edit: Any, refused: bool,
) -> None:  # fmt: skip
    text = shapes["triage"] if edit is None else _resealed(shapes["triage"], edit)
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("HARNESS_TUI_LIMITS", limits)
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert beside == here
    assert (beside[0] == "raised") == refused


def test_a_malformed_limits_variable_is_the_same_error(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    monkeypatch.setenv("HARNESS_TUI_LIMITS", "export_bytes=lots")
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert beside == here and beside[1] == "LimitsError"


def test_the_child_reads_integers_as_this_process_does(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    def long_int(d: dict[str, Any]) -> None:
        d["payload"]["big"] = int("9" * 700)

    path = tmp_path / "run.json"
    path.write_text(_resealed(shapes["triage"], long_int), encoding="utf-8")
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    finally:
        sys.set_int_max_str_digits(before)
    assert here[:2] == ("raised", "RecordError")
    assert beside == here


# -- resource hygiene --------------------------------------------------------------------------


def _no_resource_warnings(action: Callable[[], Any]) -> None:
    import gc

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with contextlib.suppress(Exception, KeyboardInterrupt):
            action()
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_no_child_or_pipe_is_left_after_a_read_or_an_error(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, started: list[Beside],
) -> None:  # fmt: skip
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(shapes["triage"], encoding="utf-8")
    bad.write_text(shapes["broken-trace"], encoding="utf-8")
    before = _children()
    _no_resource_warnings(lambda: RunRecord.read(good, lean=True))
    _no_resource_warnings(lambda: RunRecord.read_pair(good, good))
    _no_resource_warnings(lambda: RunRecord.read_pair(bad, good))  # the first file's error
    _no_resource_warnings(lambda: RunRecord.read_pair(good, bad))
    assert len(started) == 7 and _all_ended(started)
    assert _children() <= before


def test_a_slow_second_child_is_ended_when_the_first_file_is_refused(
    shapes: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    started: list[Beside],
) -> None:  # fmt: skip
    monkeypatch.setattr(beside_module, "BESIDE_BYTES", 1)
    monkeypatch.setattr(beside_module, "core_free", lambda: True)
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text(shapes["broken-truncated"], encoding="utf-8")
    good.write_text(shapes["triage"], encoding="utf-8")
    outcome = Beside.outcome
    monkeypatch.setattr(
        Beside, "outcome", lambda self: NOT_READ if self is started[0] else outcome(self)
    )
    monkeypatch.setattr(beside_module, "_CHILD", "import time; time.sleep(60)")
    before = _children()
    _no_resource_warnings(lambda: RunRecord.read_pair(bad, good))
    assert len(started) == 2 and _all_ended(started)
    assert _children() <= before


@pytest.mark.parametrize("where", ["peek", "outcome", "check"])
def test_an_interrupt_inside_the_block_leaves_no_child(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, started: list[Beside], where: str,
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")

    def interrupt(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyboardInterrupt

    if where == "peek":
        monkeypatch.setattr(beside_module, "_embedded_workflow", interrupt)
    elif where == "outcome":
        monkeypatch.setattr(Beside, "outcome", interrupt)
    else:
        monkeypatch.setattr(RunRecord, "_check", interrupt)
    if where != "check":  # a child still reading when interrupted
        monkeypatch.setattr(beside_module, "_CHILD", "import time; time.sleep(60)")
    before = _children()
    with pytest.raises(KeyboardInterrupt):
        RunRecord.read_pair(path, path)
    assert len(started) == 2 and _all_ended(started)
    assert _children() <= before


def test_an_interrupt_while_the_children_start_leaves_no_child(
    shapes: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    started: list[Beside],
) -> None:  # fmt: skip
    monkeypatch.setattr(beside_module, "BESIDE_BYTES", 1)
    monkeypatch.setattr(beside_module, "core_free", lambda: True)
    monkeypatch.setattr(beside_module, "_CHILD", "import time; time.sleep(60)")
    one, other = tmp_path / "one.json", tmp_path / "other.json"
    one.write_text(shapes["triage"], encoding="utf-8")
    other.write_text(shapes["triage"], encoding="utf-8")
    start = Beside.__init__  # the started fixture's, which records the child

    def interrupted(self: Beside, path: str, name: str) -> None:
        if name == str(other):
            raise KeyboardInterrupt  # Ctrl-C as the second child is about to start
        start(self, path, name)

    monkeypatch.setattr(Beside, "__init__", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            RunRecord.read_pair(one, other)
        assert len(started) == 1 and _all_ended(started)
    finally:
        for child in started:
            child.stop()


# -- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["with space.json", "ünï cödé ✓.json", "-dash.json", "日本.json"])
def test_paths_with_spaces_and_unicode_are_read_beside(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, name: str,
) -> None:  # fmt: skip
    path = tmp_path / name
    path.write_text(shapes["broken-trace" if name.startswith("-") else "triage"], "utf-8")
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert beside == here and type(answers[0]) in (Lean, RecordError)


def test_a_relative_path_and_a_symlink_are_read_beside(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    (tmp_path / "run.json").write_text(shapes["non-ascii"], encoding="utf-8")
    (tmp_path / "link.json").symlink_to(tmp_path / "run.json")
    monkeypatch.chdir(tmp_path)
    for path in ("run.json", "./link.json", Path("run.json")):
        beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
        assert beside == here and beside[0] == "read", path
        beside, here = _same_beside_and_here(
            lambda: RunRecord.read_pair(path, "link.json"), monkeypatch
        )
        assert beside == here and beside[0] == "pair", path
    assert all(type(answer) is Lean for answer in answers) and len(answers) == 9


def test_a_directory_a_missing_file_and_a_dangling_link_are_read_here(
    tmp_path: Path, answers: list[object], monkeypatch: pytest.MonkeyPatch,
    started: list[Beside],
) -> None:  # fmt: skip
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    for path in (tmp_path, tmp_path / "missing.json", tmp_path / "dangling.json",
                 Path("a\x00b.json")):  # fmt: skip
        beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
        assert beside == here and beside[:2] == ("raised", "RecordError"), path
    assert started == [] and answers == []


def test_a_fifo_is_refused_here(
    tmp_path: Path, answers: list[object], monkeypatch: pytest.MonkeyPatch,
    started: list[Beside],
) -> None:  # fmt: skip
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    beside, here = _same_beside_and_here(lambda: RunRecord.read(fifo, lean=True), monkeypatch)
    assert beside == here and beside[:2] == ("raised", "RecordError")
    assert "named pipe" in beside[2] and started == [] and answers == []


@pytest.mark.parametrize("spelled", ["/dev/stdin", "/dev/fd/{fd}"])
def test_a_file_given_by_descriptor_is_read_as_here(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, spelled: str,
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    with open(path, "rb") as file:
        saved = os.dup(0)
        os.dup2(file.fileno(), 0)
        try:
            name = spelled.format(fd=file.fileno())
            beside, here = _same_beside_and_here(
                lambda: RunRecord.read(name, lean=True), monkeypatch
            )
        finally:
            os.dup2(saved, 0)
            os.close(saved)
    assert here[0] == "read"
    assert beside == here


def test_a_fifo_swapped_in_after_the_size_check_does_not_block(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    large = beside_module._file_for_child

    def then_a_fifo(name: str) -> str | None:
        found = large(name)  # the check before the child and the peek
        Path(name).unlink()
        os.mkfifo(name)
        return found

    monkeypatch.setattr(beside_module, "_file_for_child", then_a_fifo)
    outcome: list[Any] = []
    reader = threading.Thread(
        target=lambda: outcome.append(_outcome(lambda: RunRecord.read(path, lean=True))),
        daemon=True,
    )
    reader.start()
    reader.join(30)  # a read that does not block ends long before; one that blocks, never
    blocked = reader.is_alive()
    while reader.is_alive():  # let the blocked open go: a writer comes and leaves
        with contextlib.suppress(OSError):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(0.05)
    assert not blocked
    assert outcome[0][:2] == ("raised", "RecordError")


def test_a_file_deleted_after_the_size_check_is_the_error_read_here(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    path = tmp_path / "run.json"
    large = beside_module._file_for_child

    def then_deleted(name: str) -> str | None:
        found = large(name)
        Path(name).unlink(missing_ok=True)
        return found

    monkeypatch.setattr(beside_module, "_file_for_child", then_deleted)
    path.write_text(shapes["triage"], encoding="utf-8")
    with pytest.raises(RecordError) as beside:
        RunRecord.read(path, lean=True)
    assert answers and isinstance(answers[0], RecordError)
    with _here(monkeypatch), pytest.raises(RecordError) as here:
        RunRecord.read(path, lean=True)
    assert str(beside.value) == str(here.value)
    assert "cannot read" in str(here.value)


@pytest.mark.parametrize("field", ["document", "plan", "logs", "outputs"])
def test_a_lean_answer_with_fields_of_the_wrong_types_is_no_answer(
    shapes: dict[str, str], tmp_path: Path, answers: list[object],
    monkeypatch: pytest.MonkeyPatch, field: str,
) -> None:  # fmt: skip
    import dataclasses

    path = tmp_path / "run.json"
    path.write_text(shapes["triage"], encoding="utf-8")
    lean = _lean_of(shapes["triage"], tmp_path)
    columns = tuple(zip(*lean.events, strict=True))
    changes: dict[str, Any] = {field: None}
    wrong = dataclasses.replace(lean, events=[], **changes)
    monkeypatch.setattr(beside_module, "_CHILD", _answer(("lean", wrong, columns)))
    beside, here = _same_beside_and_here(lambda: RunRecord.read(path, lean=True), monkeypatch)
    assert beside == here
