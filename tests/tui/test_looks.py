"""The looks tables are the one place statuses and diff kinds get their glyph, label and colour."""

from __future__ import annotations

import re
from pathlib import Path

from textual.app import App, ComposeResult

from harness_tui.engine.diff import CHANGE_KINDS
from harness_tui.engine.events import Status
from harness_tui.tui.looks import KIND_LOOKS, STATUS_LOOKS, status_label, status_name
from harness_tui.tui.widgets.dag_view import DagView

TUI = Path(__file__).resolve().parents[2] / "harness_tui" / "tui"


def test_status_looks_are_total_over_status_and_pending() -> None:
    assert set(STATUS_LOOKS) == set(Status) | {None}
    assert set(KIND_LOOKS) == set(CHANGE_KINDS)


def test_labels_fit_the_status_column() -> None:
    for status in STATUS_LOOKS:
        assert len(status_label(status)) <= 11, status
    assert [status_name(s) for s in STATUS_LOOKS] == ["pending", *(s.value for s in Status)]


def test_no_stylesheet_spells_a_status_or_kind_class_by_hand() -> None:
    names = [status_name(s) for s in STATUS_LOOKS] + [k.value for k in KIND_LOOKS]
    alternatives = "|".join(map(re.escape, names))
    pattern = re.compile(rf"[-.](?:{alternatives})\b")
    sheets = sorted(TUI.rglob("*.tcss"))
    assert len(sheets) >= 3, sheets  # app.tcss and one per screen: a moved folder finds none
    for sheet in sheets:
        assert not pattern.findall(sheet.read_text(encoding="utf-8")), sheet


class _OneDag(App[None]):
    def compose(self) -> ComposeResult:
        yield DagView()


async def test_dag_classes_derive_from_status_values_and_take_the_theme_role() -> None:
    app = _OneDag()
    async with app.run_test():
        dag = app.query_one(DagView)
        variables = app.get_css_variables()
        looks = {status_name(s): look for s, look in STATUS_LOOKS.items()}
        looks |= {kind.value: look for kind, look in KIND_LOOKS.items()}
        for name, look in looks.items():
            style = dag.get_component_rich_style(f"dag-view--{name}")
            assert style.color is not None, name
            if len(variables[look.role]) == 7:  # opaque: no blending with the background
                assert style.color.name.lower() == variables[look.role].lower(), name
            for flag in ("bold", "italic", "strike", "dim"):
                assert bool(getattr(style, flag)) == (flag in look.style.split()), (name, flag)
