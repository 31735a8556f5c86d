"""Every digest of real exports, recomputed from docs/formats.md alone.

The exports are made by running the shipped workflows (and read from the golden files); the
checks below use only hashlib, json and yaml and what the page says: canonical JSON written
from its rules, the task id, the plan order, and each digest's formula. Nothing here imports
the project's encoder, so a change to the code that the page does not describe fails here.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from harness_tui.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "formats.md"
DATA = ROOT / "tests" / "records" / "data"
GOLDEN = sorted([*DATA.glob("export-*.json"), *(DATA / "golden").glob("*.json")])

# What each run of a shipped workflow covers: retries and a fallback (agent_triage), a wide
# fan-out run on four workers (etl_fanout), skipped tasks (the anonymous user; a ticket that is
# not urgent, whose escalation is skipped and seen as "<skipped>" by a none_failed task),
# strings and numbers that canonical JSON escapes or writes specially, a graph defined in
# Python (its spec).
RUNS: dict[str, list[str]] = {
    "agent_triage": ["workflows/agent_triage.yaml"],
    "etl_fanout_parallel": ["workflows/etl_fanout.yaml", "--workers", "4"],
    "release_v1": ["workflows/release_v1.yaml"],
    "release_v2": ["workflows/release_v2.yaml"],
    "user_profile": ["workflows/user_profile.yaml"],
    "user_profile_anonymous": [
        "workflows/user_profile.yaml",
        "--payload",
        '{"user_id": "anonymous"}',
    ],
    "agent_triage_not_urgent": [
        "workflows/agent_triage.yaml",
        "--payload",
        '{"ticket": "caf\\u00e9 \\"quoted\\" \\t \\u2028 \\u001f \\\\", "customer": "c-7",'
        ' "seed": 3, "n": [1, 1.5, 1e16, -0.0, 12345678901234567890]}',
    ],
    "user_profile_python": ["workflows/user_profile.py:build_harness"],
}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- canonical JSON, written from the rules of docs/formats.md -----------------------------------

_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _string(text: str) -> str:
    out = []
    for char in text:
        if char in _SHORT:
            out.append(_SHORT[char])
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def canonical(value: Any) -> str:
    """Canonical JSON by the page's bullet list."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        assert math.isfinite(value)
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    assert isinstance(value, dict)
    return "{" + ",".join(f"{_string(k)}:{canonical(value[k])}" for k in sorted(value)) + "}"


def canonical_oneliner(value: Any) -> str:
    """The page's "in Python this is exactly" form."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)  # fmt: skip


def digest(value: Any) -> str:
    return sha256(canonical(value))


def task_id(name: str, payload: Any) -> str:
    return sha256(name + ":" + json.dumps(payload, sort_keys=True, ensure_ascii=False))[:16]


# -- the graph, read from the embedded workflow text --------------------------------------------


def tasks_of(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each task's declared fields: from the spec of a Python-defined graph, else the YAML."""
    spec = document.get("spec")
    if spec is not None:
        return dict(spec["tasks"])
    return dict(yaml.safe_load(document["workflow"]["source"])["tasks"])


def deps_of(task: dict[str, Any]) -> list[str]:
    deps = task.get("depends_on") or []
    return [deps] if isinstance(deps, str) else list(deps)


def planned(tasks: dict[str, dict[str, Any]], payload: Any) -> list[dict[str, Any]]:
    """Kahn's algorithm, smallest (task_id, name) first; level = longest path from a root."""
    ids = {name: task_id(name, payload) for name in tasks}
    waiting = {name: len(set(deps_of(task))) for name, task in tasks.items()}
    dependants: dict[str, list[str]] = {name: [] for name in tasks}
    for name, task in tasks.items():
        for dep in set(deps_of(task)):
            dependants[dep].append(name)
    level = dict.fromkeys(tasks, 0)
    ready = [(ids[name], name) for name, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    rows = []
    while ready:
        _, name = heapq.heappop(ready)
        rows.append({"index": len(rows), "level": level[name], "task": name, "task_id": ids[name]})
        for child in dependants[name]:
            level[child] = max(level[child], level[name] + 1)
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, (ids[child], child))
    assert len(rows) == len(tasks)
    return rows


def input_digests(document: dict[str, Any]) -> list[tuple[int, str]]:
    """``(seq, expected input digest)`` of every running event, by the Merkle formula."""
    tasks = tasks_of(document)
    payload_digest = digest(document["payload"])
    final: dict[str, str] = {}
    output: dict[str, str] = {}
    last_input: dict[str, str] = {}
    expected = []
    for event in document["trace"]:
        name = event["task"]
        if event["status"] == "running":
            parts = [payload_digest, canonical(tasks[name].get("with") or {})]
            for dep in sorted(deps_of(tasks[name])):
                out = output.get(dep, f"<{final[dep]}>")
                parts.append(f"{dep}\0{out}\0{last_input.get(dep, '')}")
            expected.append((event["seq"], sha256("\0".join(parts))))
            last_input[name] = event["input_digest"]
        else:
            final[name] = event["status"]
            if "output_digest" in event:
                output[name] = event["output_digest"]
    return expected


# -- the checks ---------------------------------------------------------------------------------


def check_export(document: dict[str, Any], source_dir: Path | None = None) -> list[str]:
    """Recompute every digest of ``document``; return the names of the checks done."""
    unchecked = set((document.get("redaction") or {}).get("unchecked") or [])
    digests = document["digests"]
    done = []

    def check(name: str, actual: Any, recorded: Any) -> None:
        assert actual == recorded, f"{name}: {actual} != {recorded}"
        done.append(name)

    body = {k: v for k, v in document.items() if k != "checksum"}
    assert canonical(body) == canonical_oneliner(body)
    check("checksum", digest(body), document["checksum"])
    check("plan", digest(document["plan"]), digests["plan"])
    parts = {k: digests[k] for k in ("payload", "plan", "results", "trace")}
    check("run", digest(parts), digests["run"])
    if "workflow-digest" not in unchecked:
        check("workflow", sha256(document["workflow"]["source"]), document["workflow"]["digest"])
    if document.get("spec") is not None:
        check("spec", canonical(document["spec"]), document["workflow"]["source"])
    if "trace-digest" not in unchecked:
        check("trace", digest(document["trace"]), digests["trace"])
    if "results-digest" not in unchecked:
        check("results", digest(document["results"]), digests["results"])
    if "output-digests" not in unchecked:
        committed = [e for e in document["trace"] if "output_digest" in e]
        assert sorted(e["task"] for e in committed) == sorted(document["results"])
        for event in committed:
            check("output", digest(document["results"][event["task"]]), event["output_digest"])
    if "payload-digest" not in unchecked:
        payload = document["payload"]
        check("payload", digest(payload), digests["payload"])
        tasks = tasks_of(document)
        check("plan order and task ids", planned(tasks, payload), document["plan"])
        ids = {row["task"]: row["task_id"] for row in document["plan"]}
        for event in document["trace"]:
            check("event task id", ids[event["task"]], event["task_id"])
        inputs = input_digests(document)
        assert inputs, "no task ran"
        for seq, expected in inputs:
            check("input", expected, document["trace"][seq]["input_digest"])
    return done


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Each run of ``RUNS``: its export and its JSON Lines."""
    folder = tmp_path_factory.mktemp("exports")
    made = {}
    for name, args in RUNS.items():
        export, lines = folder / f"{name}.json", folder / f"{name}.jsonl"
        result = CliRunner().invoke(
            cli,
            ["run", *[str(ROOT / a) if a.startswith("workflows/") else a for a in args],
             "--no-store", "-q", "--export", str(export), "--jsonl", str(lines)],
        )  # fmt: skip
        assert result.exit_code in (0, 1), result.output
        made[name] = (export, lines)
    return made


def test_the_page_states_every_formula_the_test_uses() -> None:
    text = DOC.read_text(encoding="utf-8")
    for needle in (
        'json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)',
        "json.dumps(payload, sort_keys=True, ensure_ascii=False)",
        'task_id      = sha256(utf8(name + ":" + payload_text))[:16]',
        'parts.append(dep + "\\0" + out + "\\0" + inp)',
        'input_digest = sha256(utf8("\\0".join(parts)))',
        '| run | `sha256(utf8(canonical({"payload": P, "plan": L, "results": R, "trace": T})))`',
        '| checksum | `sha256(utf8(canonical(export without its "checksum" key)))` |',
    ):
        assert needle in text, needle


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_digest_of_a_shipped_workflow_run(
    name: str, shipped: dict[str, tuple[Path, Path]]
) -> None:
    export, _ = shipped[name]
    document = json.loads(export.read_text(encoding="utf-8"))
    done = check_export(document)
    for kind in ("checksum", "payload", "plan", "trace", "results", "run", "input", "output"):
        assert kind in done, kind
    if name == "agent_triage_not_urgent":  # the "<skipped>" branch of the input digest
        statuses = {e["task"]: e["status"] for e in document["trace"]}
        assert statuses["escalate"] == "skipped" and statuses["finalize"] == "succeeded"
    if name == "user_profile_python":
        assert "spec" in done


@pytest.mark.parametrize("name", sorted(RUNS))
def test_json_lines_are_the_canonical_events_plus_meta(
    name: str, shipped: dict[str, tuple[Path, Path]]
) -> None:
    export, lines = shipped[name]
    document = json.loads(export.read_text(encoding="utf-8"))
    texts = lines.read_text(encoding="utf-8").splitlines()
    assert len(texts) == len(document["trace"]) > 0
    canonical_texts = []
    for text, event in zip(texts, document["trace"], strict=True):
        head, marker, meta = text.partition(',"meta":')
        assert marker and json.loads(meta[:-1])["task_name"] == event["task"]
        canonical_texts.append(head + "}")
        assert head + "}" == canonical(event)
    assert sha256("[" + ",".join(canonical_texts) + "]") == document["digests"]["trace"]


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_every_digest_of_a_golden_export(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    done = check_export(document)
    assert {"checksum", "plan", "run"} <= set(done)
    if not document.get("redacted"):
        assert {"payload", "trace", "results", "input", "output"} <= set(done)


def test_the_golden_exports_were_found() -> None:
    names = {p.name for p in GOLDEN}
    assert {"export-1.0.json", "user_profile_redacted-1.1.json"} <= names
