"""Fuzzing the three readers of untrusted input: workflow files, ``--payload``, run exports.

Every input must end in success or in one clear line per problem (exit 2 on the command
line), never a traceback. Per target: 1,000 hypothesis cases and 1,000 mutations of real
files in-process, then 50 mutated files through ``harness-tui`` in child processes.
Hypothesis runs derandomized and the mutations come from seeded generators, so a failure
reproduces.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.engine.canonical import digest_text
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.records.export.writing import checksum
from harness_tui.workflow.errors import WorkflowError
from harness_tui.workflow.loader import load_workflow, parse_workflow
from harness_tui.workflow.payload import PayloadError, parse_payload

ROOT = Path(__file__).resolve().parents[1]
HYPOTHESIS_CASES = 1_000
MUTATION_CASES = 1_000
SUBPROCESS_CASES = 50

FUZZ = settings(
    max_examples=HYPOTHESIS_CASES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

YAML_TOKENS = [
    "\n",
    "  ",
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "!!python/name:os.system ",
    "!x ",
    "!!str ",
    "!!int ",
    "!!binary ",
    "<<: ",
    "? ",
    "---\n",
    "...\n",
    "#",
    "'",
    '"',
    "|\n",
    ">\n",
    "\t",
    "yes",
    "no",
    "on",
    "~",
    "null",
    "1:30",
    "010",
    "0o17",
    "0x1F",
    "1e9",
    "1e400",
    ".inf",
    "-.inf",
    ".nan",
    "2026-01-01",
    "9" * 1200,
    "\x00",
    "\x07",
    "\ud800",
    "\ufeff",
    "é",
    "tasks",
    "run",
    "builtin:echo",
    "builtin:select",
    "depends_on",
    "max_retries",
    "timeout_seconds",
    "retry_interval",
    "when",
    "with",
    "fallback",
    "trigger",
    "payload",
    "defaults",
    "on_failure",
    "a",
    "b",
    "1",
    "-1",
    "0",
]
JSON_TOKENS = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    "\\",
    "\\u",
    "\\ud800",
    "\\udc00",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "9" * 5000,
    "null",
    "true",
    "-0",
    "0.5",
    "\x00",
    "é",
    " ",
    "\n",
    '"format"',
    '"harness-run"',
    '"status"',
    '"seq"',
    '"index"',
    '"format_version"',
    "1.1",
    '"1.1"',
]


def _one_line_each(lines: list[str]) -> None:
    for line in lines:
        assert line and len(line.splitlines()) == 1, repr(line)


def _mutate(text: str, tokens: list[str], rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        size = len(text)
        at = rng.randint(0, size)
        end = min(size, at + rng.randint(0, 40))
        kind = rng.randrange(5)
        if kind == 0:
            text = text[:at] + text[end:]
        elif kind == 1:
            text = text[:at] + rng.choice(tokens) + text[at:]
        elif kind == 2:
            text = text[:at] + text[at:end] * rng.randint(2, 30) + text[at:]
        elif kind == 3:
            text = text[:at] + rng.choice(tokens) + text[end:]
        else:
            other = rng.randint(0, size)
            text = text[:other] + text[at:end] + text[other:]
    return text


def _mutations(seeds: list[str], tokens: list[str], count: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(count):
        yield _mutate(rng.choice(seeds), tokens, rng)


# -- targets ------------------------------------------------------------------------------------


def check_workflow(text: str) -> None:
    try:
        parse_workflow(text, "fuzz.yaml")
    except WorkflowError as exc:
        assert exc.problems
        _one_line_each([str(problem) for problem in exc.problems])


def check_payload(text: str) -> None:
    try:
        parse_payload(text, "--payload")
    except PayloadError as exc:
        _one_line_each([str(exc)])


def check_export(text: str) -> None:
    try:
        RunRecord.parse(text, "fuzz.json")
    except RecordError as exc:
        _one_line_each([str(exc)])


WORKFLOW_SEEDS = [
    path.read_text(encoding="utf-8")
    for path in sorted([*ROOT.glob("workflows/*.yaml"), *ROOT.glob("tests/workflow/broken/*.yaml")])
    if path.stat().st_size < 100_000
]
PAYLOAD_SEEDS = [
    '{"user_id": "u1", "tier": "gold", "items": [1, 2.5, null, true]}',
    '[{"a": {"b": [[], {}]}}, "é", -0.0, 1e300]',
    '"text"',
    "12345678901234567890",
    '{"deep": ' + "[" * 50 + "]" * 50 + "}",
]


@pytest.fixture(scope="module")
def export_document() -> dict[str, Any]:
    from harness_tui.engine.clock import FakeClock
    from harness_tui.engine.orchestrator import TaskOrchestrator

    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    orchestrator = TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01))
    run = orchestrator.start(workflow.payload).run_to_end()
    return RunRecord.from_run(run, workflow).document


def _export_seeds(document: dict[str, Any]) -> list[str]:
    return [
        RunRecord(document).to_text(),
        (ROOT / "tests/records/data/export-1.0.json").read_text(encoding="utf-8"),
    ]


# -- hypothesis ---------------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
token_text = st.lists(st.sampled_from(YAML_TOKENS) | st.text(max_size=4), max_size=40).map("".join)
task = st.fixed_dictionaries(
    {
        "run": st.sampled_from(["builtin:echo", "builtin:select", "x:y", "nope"])
        | st.text(max_size=5)
    },
    optional={
        "depends_on": st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3) | json_values,
        "max_retries": st.integers(-2, 2000) | json_values,
        "timeout_seconds": st.floats() | json_values,
        "retry_interval": st.floats() | json_values,
        "when": st.sampled_from(["payload.x", "", "[", "results.a == `1`"]) | json_values,
        "with": st.dictionaries(st.sampled_from(["expr", "x"]), json_values, max_size=2),
        "trigger": st.sampled_from(["all_done", "bad"]),
        "fallback": st.sampled_from(["builtin:echo", "::"]),
    },
)
workflow_data = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["w", "bad name", ""]),
        "tasks": st.dictionaries(
            st.sampled_from(["a", "b", "c", "d", "1x"]), task | json_values, max_size=4
        ),
    },
    optional={
        "payload": json_values,
        "defaults": json_values,
        "on_failure": json_values,
        "extra": json_values,
    },
)


def _dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, allow_unicode=True, default_flow_style=None)


@pytest.mark.slow
@FUZZ
@given(st.one_of(token_text, workflow_data.map(_dump_yaml), json_values.map(_dump_yaml)))
def test_hypothesis_workflow_text(text: str) -> None:
    check_workflow(text)


@pytest.mark.slow
@FUZZ
@given(
    st.one_of(
        json_values.map(lambda v: json.dumps(v)),
        st.lists(st.sampled_from(JSON_TOKENS) | st.text(max_size=3), max_size=30).map("".join),
    )
)
def test_hypothesis_payload(text: str) -> None:
    check_payload(text)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


def _replace(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``document`` with ``value`` (copied too) at ``path``."""
    value = json.loads(json.dumps(value, allow_nan=True))
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    target = copy
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return copy


def _resigned(document: dict[str, Any]) -> str:
    if isinstance(document, dict):
        with contextlib.suppress(ValueError, TypeError):  # not canonical: refused before
            document["checksum"] = checksum(document)
    return json.dumps(document, allow_nan=True)


@pytest.mark.slow
def test_hypothesis_export(export_document: dict[str, Any]) -> None:
    paths = list(_paths(export_document))

    @FUZZ
    @given(st.sampled_from(paths), json_values | st.sampled_from([10**2000, "\ud800", [[[[[]]]]]]))
    def case(path: tuple[Any, ...], value: Any) -> None:
        check_export(_resigned(_replace(export_document, path, value)))

    case()


# -- mutations ----------------------------------------------------------------------------------


def test_mutated_workflows() -> None:
    for text in _mutations(WORKFLOW_SEEDS, YAML_TOKENS, MUTATION_CASES, seed=18):
        check_workflow(text)


def test_mutated_payloads() -> None:
    for text in _mutations(PAYLOAD_SEEDS, JSON_TOKENS, MUTATION_CASES, seed=18):
        check_payload(text)


NASTY = [None, -1, 0, 10**40, 10**2000, 1.5, math.nan, math.inf, "", "\ud800", "x", [], {}]


def _structured(document: dict[str, Any], paths: list[tuple[Any, ...]], rng: random.Random) -> str:
    """One field of a real export changed, checksum recomputed: a value moved from elsewhere,
    a nasty constant, a number shifted, a key dropped, or the embedded workflow mutated."""
    path = rng.choice(paths)
    kind = rng.randrange(5)
    if kind == 0:
        value = _get(document, rng.choice(paths))
    elif kind == 1:
        value = rng.choice(NASTY)
    elif kind == 2:
        old = _get(document, path)
        value = old + rng.choice([-1, 1]) if type(old) is int else old
    elif kind == 3 and len(path) > 1:
        edited = _replace(document, path[:-1], _get(document, path[:-1]))
        parent = _get(edited, path[:-1])
        del parent[path[-1]]
        return _resigned(edited)
    else:
        source = _mutate(document["workflow"]["source"], YAML_TOKENS, rng)
        edited = _replace(document, ("workflow", "source"), source)
        with contextlib.suppress(UnicodeEncodeError):
            edited["workflow"]["digest"] = digest_text(source)
        return _resigned(edited)
    return _resigned(_replace(document, path, value))


def _get(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


def test_mutated_exports(export_document: dict[str, Any]) -> None:
    texts = _mutations(_export_seeds(export_document), JSON_TOKENS, MUTATION_CASES // 2, seed=18)
    for text in texts:
        check_export(text)
    rng = random.Random(18)
    paths = list(_paths(export_document))
    for _ in range(MUTATION_CASES - MUTATION_CASES // 2):
        check_export(_structured(export_document, paths, rng))


# -- through the command line -------------------------------------------------------------------


def _cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=60,
        check=False,
        cwd=ROOT,
    )


def _run_all(
    cases: list[list[str]], check: Callable[[subprocess.CompletedProcess[str]], None]
) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        for result in pool.map(_cli, cases):
            assert "Traceback" not in result.stderr, result.stderr
            assert result.returncode in (0, 2), (result.args, result.returncode, result.stderr)
            if result.returncode == 2:
                check(result)


def _one_error_line(result: subprocess.CompletedProcess[str]) -> None:
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") or ": " in line


def _problem_lines(result: subprocess.CompletedProcess[str]) -> None:
    lines = result.stderr.splitlines()
    assert lines and all(": " in line for line in lines), result.stderr


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return str(path)


@pytest.mark.slow
def test_mutated_workflows_through_the_cli(tmp_path: Path) -> None:
    texts = _mutations(WORKFLOW_SEEDS, YAML_TOKENS, SUBPROCESS_CASES, seed=1818)
    cases = [["validate", _write(tmp_path, f"w{i}.yaml", t)] for i, t in enumerate(texts)]
    _run_all(cases, _problem_lines)


@pytest.mark.slow
def test_mutated_payloads_through_the_cli(tmp_path: Path) -> None:
    workflow = str(ROOT / "workflows/user_profile.yaml")
    cases = []
    for i, text in enumerate(_mutations(PAYLOAD_SEEDS, JSON_TOKENS, SUBPROCESS_CASES, seed=1818)):
        inline = "\x00" not in text and not any(0xD800 <= ord(c) < 0xE000 for c in text)
        given_as = text if inline and i % 2 else "@" + _write(tmp_path, f"p{i}.json", text)
        cases.append(["plan", workflow, "--payload", given_as])
    _run_all(cases, _one_error_line)


@pytest.mark.slow
def test_mutated_exports_through_the_cli(tmp_path: Path, export_document: dict[str, Any]) -> None:
    texts = list(_mutations(_export_seeds(export_document), JSON_TOKENS, 10, seed=1818))
    rng = random.Random(1818)
    paths = list(_paths(export_document))
    texts += [_structured(export_document, paths, rng) for _ in range(SUBPROCESS_CASES - 10)]
    cases = [["replay", _write(tmp_path, f"e{i}.json", t)] for i, t in enumerate(texts)]
    _run_all(cases, _one_error_line)


def test_the_mutator_changes_its_input() -> None:
    rng = random.Random(1)
    changed = [_mutate(seed, YAML_TOKENS, rng) != seed for seed in WORKFLOW_SEEDS[:20]]
    assert sum(changed) >= 15
