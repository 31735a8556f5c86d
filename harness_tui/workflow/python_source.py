"""Workflows defined in Python: ``path/to/file.py:factory``, and their code-free spec.

Loading ``file.py:factory`` imports the user's module by design (docs/invariants.md, I6): the
factory (a callable returning a :class:`~harness_tui.engine.harness.Harness` or a
:class:`~harness_tui.engine.graph.TaskGraph`, or a module attribute holding one) builds the
graph. The payload comes from a ``PAYLOAD`` (or ``payload``) attribute beside it.

An export of such a run cannot embed the code, so it embeds a *spec*: the graph's names,
dependencies, retry/timeout/trigger fields, params, ``on_failure`` and references as
``python:module:qualname``, with the module's source digest. :func:`workflow_from_spec`
rebuilds a graph from it without importing anything, so the export replays, diffs and
verifies where the module cannot be imported; ``when`` outcomes come from the recorded trace.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.canonical import check_json, digest_text
from ..engine.errors import HarnessError
from ..engine.graph import OnFailure, Predicate, TaskGraph, TaskNode, Trigger
from ..engine.scheduler import DeterministicScheduler
from ..engine.spec import task_spec
from ..engine.untrusted import shorten, visible
from .errors import Problem, WorkflowError
from .loader import Workflow
from .payload import check_payload_size
from .refs import PYTHON_REF as _REF
from .refs import is_python_ref

if TYPE_CHECKING:
    from ..engine.harness import Harness

__all__ = [
    "SPEC_FORMAT",
    "graph_workflow",
    "is_python_ref",
    "load_python",
    "python_spec",
    "spec_of",
    "spec_of_source",
    "workflow_from_spec",
]

SPEC_FORMAT = "harness-spec/1"
"""The ``format`` of an export's code-free spec."""


def load_python(spec: str) -> Workflow:
    """Import ``file.py`` and build the workflow its ``factory`` returns.

    Raises:
        WorkflowError: one line: the file is missing, cannot be imported, the attribute is
            missing or not a Harness/TaskGraph, the graph is invalid, or a revision was given.
    """
    match = _REF.match(spec)
    if match is None:
        if is_python_ref(spec):
            raise _problem(spec, "a Python workflow cannot be read at a git revision (@REV): "
                                 "its module would have to be imported from history")  # fmt: skip
        raise _problem(spec, "expected file.py:factory")
    file = Path(match["file"])
    if not file.is_file():
        raise _problem(spec, f"no such file: {file}")
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _problem(spec, f"cannot read {file}: {exc}") from None
    with _printed_to_stderr():  # stdout may be the JSON of `--export -` or `plan --json`
        module = _import(file, spec)
        built = _build(module, match["attr"], spec)
    from ..engine.harness import Harness

    graph = built.graph if isinstance(built, Harness) else built
    with _printed_to_stderr():  # a module __getattr__ is user code too
        on_failure = _setting(module, "ON_FAILURE", "stop", spec)
        payload = _setting(module, "PAYLOAD", _setting(module, "payload", {}, spec), spec)
        name = _setting(module, "NAME", file.stem, spec)
        doc = _setting(module, "__doc__", None, spec)
        description = _setting(module, "DESCRIPTION", doc.strip() if isinstance(doc, str) else "",
                               spec)  # fmt: skip
    for setting, value in (
        ("ON_FAILURE", on_failure),
        ("NAME", name),
        ("DESCRIPTION", description),
    ):
        if not isinstance(value, str):
            raise _problem(spec, f"{setting} must be a string, not {type(value).__name__!r}")
    try:
        on_failure = OnFailure(on_failure)
    except ValueError:
        allowed = ", ".join(repr(o.value) for o in OnFailure)
        raise _problem(spec, f"ON_FAILURE must be one of {allowed}, not {on_failure!r}") from None
    try:
        text = check_json(payload, "payload")
        check_payload_size(text, "PAYLOAD")
        DeterministicScheduler(graph).plan(payload)
    except (HarnessError, ValueError, TypeError) as exc:
        raise _problem(spec, str(exc)) from None
    document = spec_of(graph, name, description, on_failure, payload, digest_text(source))
    return _workflow(document, spec, graph)


_MISSING = object()


def _setting(module: Any, attr: str, default: Any, spec: str) -> Any:
    """A module-level setting, or ``default``; a module ``__getattr__`` that fails is one
    line."""
    try:
        value = getattr(module, attr, _MISSING)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # user code: any failure (SystemExit too) is one line
        raise _problem(spec, f"reading {attr} failed: {_failure(exc)}") from None
    return default if value is _MISSING else value


def _failure(exc: BaseException) -> str:
    """``Type: message`` of a user exception, even one whose ``str()`` fails."""
    try:
        message = str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException as inner:
        message = f"<str() of the exception raised {type(inner).__name__}>"
    return f"{type(exc).__name__}: {message}"


def graph_workflow(graph: TaskGraph, payload: Any, name: str = "debug",
                   on_failure: OnFailure | str = OnFailure.STOP) -> Workflow:  # fmt: skip
    """A workflow over a graph built in this process (``debug()``): no file, no module."""
    document = spec_of(graph, name, "", OnFailure(on_failure), payload, "")
    return _workflow(document, f"<{name}>", graph)


@contextlib.contextmanager
def _printed_to_stderr() -> Iterator[None]:
    """What the user's module prints while it is imported and its factory called goes to
    stderr, escape sequences shown, never to stdout (where it would corrupt JSON output)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    finally:
        text = out.getvalue() + err.getvalue()
        if text:
            sys.stderr.write(visible(shorten(text, 10_000), multiline=True).rstrip("\n") + "\n")


def _problem(spec: str, message: str) -> WorkflowError:
    return WorkflowError([Problem(spec, 0, 0, message)])


def _import(file: Path, spec: str) -> Any:
    """The user's module, imported from ``file`` (its folder importable, as for YAML refs)."""
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = file.stem
    loader_spec = importlib.util.spec_from_file_location(name, file)
    if loader_spec is None or loader_spec.loader is None:
        raise _problem(spec, f"cannot import {file}")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise WorkflowError(
            [Problem(str(file), exc.lineno or 0, exc.offset or 0, f"SyntaxError: {exc.msg}")]
        ) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # user code: any failure (SystemExit too) is one line
        sys.modules.pop(name, None)
        raise _problem(spec, f"importing {file} failed: {_failure(exc)}") from None
    return module


def _build(module: Any, attr: str, spec: str) -> Harness | TaskGraph:
    """The module attribute, called if it is a factory, as a Harness or a TaskGraph."""
    from ..engine.harness import Harness

    value = _setting(module, attr, _MISSING, spec)
    if value is _MISSING:
        raise _problem(spec, f"{module.__name__} has no attribute {attr!r}")
    if callable(value) and not isinstance(value, (Harness, TaskGraph)):
        try:
            value = value()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # user code: any failure (SystemExit too) is one line
            raise _problem(spec, f"{attr}() failed: {_failure(exc)}") from None
    if not isinstance(value, (Harness, TaskGraph)):
        raise _problem(spec, f"{attr} gave {type(value).__name__!r}, not a Harness or TaskGraph")
    return value


def python_spec(workflow: Workflow) -> dict[str, Any] | None:
    """The code-free spec of a Python-defined workflow (what its export embeds), or None
    for a workflow file."""
    return spec_of_source(workflow.source)


def spec_of_source(source: str) -> dict[str, Any] | None:
    """The spec a Python-defined workflow's source is, or None for YAML (which no spec's
    canonical JSON text is)."""
    if not source.startswith('{"'):
        return None
    try:
        spec = json.loads(source)
    except ValueError:
        return None
    return spec if isinstance(spec, dict) and spec.get("format") == SPEC_FORMAT else None


def spec_of(
    graph: TaskGraph,
    name: str,
    description: str,
    on_failure: OnFailure,
    payload: Any,
    module_digest: str,
) -> dict[str, Any]:
    """The code-free spec of a Python-defined graph (what an export embeds)."""
    tasks = {}
    for task, node in graph.nodes.items():
        fields = task_spec(node)
        for key in ("run", "fallback"):
            if fields[key] is not None:
                fields[key] = f"python:{fields[key]}"
        if node.when is not None and not node.when_source:
            fields["when"] = f"python:{fields['when']}"
        tasks[task] = {**fields, "description": node.description}
    return {
        "format": SPEC_FORMAT,
        "name": name,
        "description": description,
        "on_failure": on_failure.value,
        "payload": payload,
        "module_digest": module_digest,
        "tasks": tasks,
    }


def _workflow(document: Mapping[str, Any], path: str, graph: TaskGraph) -> Workflow:
    source = check_json(dict(document), "spec")
    return Workflow(
        name=document["name"],
        description=document["description"],
        path=path,
        source=source,
        digest=digest_text(source),
        graph=graph,
        payload=document["payload"],
        on_failure=OnFailure(document["on_failure"]),
        specs={task: dict(fields) for task, fields in document["tasks"].items()},
    )


def workflow_from_spec(document: Mapping[str, Any], path: str,
                       skipped: Collection[str] = ()) -> Workflow:  # fmt: skip
    """A workflow rebuilt from a code-free spec, importing nothing: its tasks cannot run
    (replay supplies their recorded outcomes), and a ``when`` is true unless the task is in
    ``skipped`` (the tasks the recorded trace shows skipped).

    Raises:
        WorkflowError: the spec is malformed.
    """
    if not isinstance(document, Mapping) or document.get("format") != SPEC_FORMAT:
        raise _problem(path, f"the embedded spec is not {SPEC_FORMAT}")
    try:
        nodes = [_node(task, fields, skipped) for task, fields in document["tasks"].items()]
        graph = TaskGraph.from_nodes(nodes)
        return _workflow(document, path, graph)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _problem(path, f"the embedded spec is malformed: {exc}") from None


def _node(task: str, fields: Mapping[str, Any], skipped: Collection[str]) -> TaskNode:
    when = fields["when"]
    return TaskNode(
        name=task,
        fn=_unavailable(fields["run"]),
        depends_on=tuple(fields["depends_on"]),
        max_retries=int(fields["max_retries"]),
        timeout_seconds=fields["timeout_seconds"],
        retry_interval=float(fields["retry_interval"]),
        fallback=_unavailable(fields["fallback"]) if fields["fallback"] else None,
        when=None if when is None else _recorded_when(task, skipped),
        trigger=Trigger(fields["trigger"]),
        params=dict(fields["with"]),
        description=str(fields.get("description", "")),
        ref=str(fields["run"] or ""),
        fallback_ref=str(fields["fallback"] or ""),
        when_source=str(when or ""),
    )


def _recorded_when(task: str, skipped: Collection[str]) -> Predicate:
    """The condition's recorded outcome: false exactly when the trace shows it skipped."""

    def recorded(scope: Mapping[str, Any]) -> bool:
        return task not in skipped

    return recorded


def _unavailable(ref: str | None) -> Callable[[Any], Any]:
    def unavailable(inputs: Any) -> Any:
        raise RuntimeError(f"{ref} is defined in Python and not importable here (replay only)")

    return unavailable
