"""A corpus of hostile inputs: workflow files, task code, exports and file names whose text
would drive a terminal if printed raw (clear screen, retitle, clipboard write, 8-bit CSI, bidi
override) or would be parsed as Rich markup (``[/]``, ``[link=...]``), and a 1 MB task name.

:func:`build` writes it into a folder; the CLI and TUI tests read it from there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from harness_tui.records.export.writing import checksum
from harness_tui.records.runs.settings import RunSettings

# Every attack in one string, as Python text (for code and JSON) and as YAML escapes.
HOSTILE = (
    "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x9b31m"
    "[/][link=https://evil.example]all good[/link]\u202etxt.exe"
)
HOSTILE_YAML = (
    r"\e[2J\e[H\e]0;pwned\a\e]52;c;cHduZWQ=\a\x9b31m"
    r"[/][link=https://evil.example]all good[/link]\u202etxt.exe"
)
# What the escapes look like once made visible.
SHOWN = "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07\\x1b]52;c;cHduZWQ=\\x07\\x9b31m"
# Bytes a terminal would obey: C0 (but line feed and tab), DEL, C1 and bidi controls.
OBEYED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
HUGE_NAME = "x" * 1_000_000

TASKS = f'''
"""Task code whose output, exceptions and logs are hostile."""

HOSTILE = {HOSTILE!r}


def shout(inputs):
    print("log " + HOSTILE)
    print("second line " + HOSTILE)
    return {{HOSTILE: HOSTILE, "lines": "one\\n" + HOSTILE + "\\nthree"}}


def explode(inputs):
    print("about to fail " + HOSTILE)
    raise ValueError(HOSTILE)
'''


HARNESS = f'''
"""A harness defined in Python: hostile params, and a factory that fails with hostile text."""

from hostile_tasks import explode, shout

from harness_tui import Harness

HOSTILE = {HOSTILE!r}


def build():
    harness = Harness()
    harness.register("shout", shout, params={{HOSTILE: HOSTILE}})
    harness.register("explode", explode, depends_on=["shout"])
    return harness


def boom():
    raise ValueError(HOSTILE * 10_000)
'''


def _workflow(value: str, description: str = HOSTILE_YAML) -> str:
    return f"""\
name: hostile
description: "{description}"
payload: {{"{HOSTILE_YAML}": "{HOSTILE_YAML}", ticket: "{HOSTILE_YAML}"}}
on_failure: continue
tasks:
  shout:
    run: hostile_tasks:shout
    description: "{HOSTILE_YAML}"
  echo:
    run: builtin:echo
    depends_on: [shout]
    with: {{"{HOSTILE_YAML}": "{value}", multi: "one\\n{HOSTILE_YAML}\\nthree"}}
  explode:
    run: hostile_tasks:explode
    depends_on: [shout]
  refuse:
    run: builtin:fail
    with: {{message: "{HOSTILE_YAML}"}}
"""


INVALID = f"""\
name: invalid
tasks:
  "{HOSTILE_YAML}":
    run: builtin:echo
  ok:
    run: builtin:echo
    depends_on: ["{HOSTILE_YAML}-missing"]
    when: "{HOSTILE_YAML} =="
    "{HOSTILE_YAML}": 1
  sel:
    run: builtin:select
    with: {{expr: "[{HOSTILE_YAML}"}}
  ref:
    run: "{HOSTILE_YAML}:f"
  cond:
    run: builtin:echo
    when: "{HOSTILE_YAML} =="
"""


@dataclass(frozen=True)
class Corpus:
    """Where each hostile file is."""

    folder: Path
    workflow: Path
    changed: Path
    invalid: Path
    huge: Path
    hostile_file_name: Path
    invalid_file_name: Path
    export: Path
    changed_export: Path
    forged_export: Path
    bad_export: Path
    golden: Path


def _export(workflow: Path, target: Path) -> None:
    from harness_tui.engine.clock import FakeClock
    from harness_tui.records.runs.live import LiveRun
    from harness_tui.workflow.loader import load_workflow

    loaded = load_workflow(workflow)
    live = LiveRun.start(
        loaded, loaded.payload, RunSettings(clock=FakeClock(start=100.0, tick=0.25))
    )
    live.drive()
    target.write_text(live.export().to_text(), encoding="utf-8")


def _forge(export: Path, target: Path) -> None:
    """An export edited by hand (checksum recomputed): hostile workflow name and path."""
    document = json.loads(export.read_text(encoding="utf-8"))
    document["workflow"]["name"] = HOSTILE
    document["workflow"]["path"] = HOSTILE + ".yaml"
    document["checksum"] = checksum(document)
    target.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")


def build(folder: Path) -> Corpus:
    """Write the corpus into ``folder`` (runs the hostile workflows once, in process)."""
    (folder / "hostile_tasks.py").write_text(TASKS, encoding="utf-8")
    (folder / "hostile_harness.py").write_text(HARNESS, encoding="utf-8")
    workflow = folder / "hostile.yaml"
    workflow.write_text(_workflow(HOSTILE_YAML), encoding="utf-8")
    changed = folder / "hostile_v2.yaml"
    # A new description too: a plan diff's summary line names the old and the new one.
    changed.write_text(
        _workflow("[/] [link=https://evil.example]x[/link] " + HOSTILE_YAML, "v2 " + HOSTILE_YAML)
    )
    invalid = folder / "invalid.yaml"
    invalid.write_text(INVALID, encoding="utf-8")
    huge = folder / "huge.yaml"
    huge.write_text(
        f'name: huge\ntasks:\n  a:\n    run: builtin:echo\n    depends_on: ["{HUGE_NAME}"]\n'
        f"  ? {HUGE_NAME}\n  : {{run: builtin:echo}}\n"
    )
    hostile_file_name = folder / f"evil{HOSTILE.replace('/', '|')}.yaml"
    hostile_file_name.write_text(_workflow(HOSTILE_YAML), encoding="utf-8")
    invalid_file_name = folder / f"bad{HOSTILE.replace('/', '|')}.yaml"
    invalid_file_name.write_text(INVALID, encoding="utf-8")
    export, changed_export = folder / "hostile.json", folder / "hostile_v2.json"
    _export(workflow, export)
    _export(changed, changed_export)
    forged_export = folder / "forged.json"
    _forge(export, forged_export)
    bad_export = folder / "bad.json"
    bad_export.write_text(json.dumps({"format": HOSTILE, HOSTILE: 1}), encoding="utf-8")
    golden = folder / "golden.json"
    # A golden file pinned from the changed workflow: the hostile one mismatches it.
    pinned = json.loads(changed_export.read_text(encoding="utf-8"))
    keys = ("payload", "plan", "trace", "results")
    golden.write_text(json.dumps({key: pinned[key] for key in keys}, ensure_ascii=False))
    return Corpus(
        folder, workflow, changed, invalid, huge, hostile_file_name, invalid_file_name, export,
        changed_export,
        forged_export, bad_export, golden,
    )  # fmt: skip
