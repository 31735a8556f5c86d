"""The README and docs/: the Python examples run as written, every link lands, nothing cites a
file that is not in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_python_block_of_the_readme_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_every_relative_link_lands_on_a_file_and_heading() -> None:
    links = [(page, link) for page in PAGES for link in LINK.findall(page.read_text("utf-8"))]
    assert len(links) > 20
    for page, link in links:
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.is_file(), f"{page.name}: {link} is not a file"
        if anchor:
            assert anchor in _anchors(target), f"{page.name}: {link}: no such heading"


def test_the_readme_is_short_and_links_every_page_of_the_docs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in text, page.name


def test_nothing_cites_a_design_file_outside_the_repository() -> None:
    folders = ("harness_tui", "tests", "benchmarks", "scripts", "docs")
    files = [p for f in folders for p in (ROOT / f).rglob("*") if p.suffix in {".py", ".md"}]
    assert len(files) > 100
    needle = "DESIGN" + ".md"  # spelled apart, so that this file does not cite it
    citing = [str(p.relative_to(ROOT)) for p in files if needle in p.read_text("utf-8")]
    assert citing == [], citing


def test_ci_runs_the_readmes_test_command_verbatim_then_the_slow_tier() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"^(.+?)\s+# test it$", readme, re.MULTILINE)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"\n{command}\n" in ci
    assert ci.index(command) < ci.index("python -m pytest -m slow")


def test_the_task_id_formula_is_exact() -> None:
    import hashlib
    import json

    from harness_tui.engine.canonical import task_id

    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    (formula,) = re.findall(r"`(sha256\(f\"\{name\}.*?\[:16\])`", text)
    payload = {"z": [1, {"é": "ü"}], "a": 2.5, "m": None}
    scope = {"sha256": hashlib.sha256, "json": json, "name": "check_quota", "payload": payload}
    assert eval(formula, scope) == task_id("check_quota", payload)


def test_the_default_timeouts_are_the_ones_the_readme_states() -> None:
    from harness_tui import TaskNode
    from harness_tui.workflow.loader import parse_workflow

    text = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in PAGES)
    assert "a workflow file's task has no timeout unless it or `defaults:` sets one" in text
    assert "`TaskNode` defaults to 30 s" in text
    flow = parse_workflow("name: t\ntasks:\n  a: {run: builtin:echo}\n")
    assert flow.graph["a"].timeout_seconds is None
    assert TaskNode("a").timeout_seconds == 30.0
