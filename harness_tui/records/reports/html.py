"""The run report as one self-contained HTML file: no script, no network, nothing fetched.

The DAG is an SVG drawn from the headless layout (:mod:`harness_tui.layout`, the same one
the terminal draws), coloured by each task's final status; a timeline of the attempts is
drawn when the export has wall-clock timings. Every text from the run is HTML-escaped.
"""

from __future__ import annotations

from html import escape

from ...engine.events import PENDING
from ...engine.untrusted import visible
from ...layout import Mode, layout_dag
from ..export import RunRecord
from .markdown import (
    DASHED,
    STATUS_COLOURS,
    Facts,
    commands,
    dependencies,
    facts,
    failure_logs,
    markdown_report,
    trace_rows,
    versions,
    visible_block,
    what_if,
)
from .timeline import attempt_spans

__all__ = ["REPORT_SUFFIXES", "html_report", "render_report"]

REPORT_SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}
"""File name endings that ask for a report rather than an export (the workbench's ``e``)."""

_CELL_X = 8
_CELL_Y = 16
_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; white-space: pre-wrap; }
.status-failed, .status-timed_out, .status-upstream_failed { color: #c62828; font-weight: bold; }
.status-succeeded { color: #2e7d32; }
.status-fallback { color: #b8860b; }
svg text { font: 12px monospace; }
.legend { margin-right: 1.5em; white-space: nowrap; }
.swatch { display: inline-block; width: 1em; height: 1em; border: 1px solid; margin-right: .4em;
  vertical-align: -.15em; border-radius: 3px; }
"""


def _e(value: object) -> str:
    """An untrusted value as inert one-line HTML text: controls made visible, then escaped."""
    return escape(visible(str(value)), quote=True)


def _block(text: str) -> str:
    """An untrusted multi-line text for a ``<pre>``: line breaks kept, other controls made
    visible, then escaped."""
    return escape(visible_block(text), quote=True)


def dag_svg(facts_: Facts) -> str:
    """The DAG as inline SVG from the headless layout (boxes, edge runs and arrow heads)."""
    record = facts_.record
    names = list(record.plan.names)
    levels = dict(zip(names, record.plan.levels, strict=True))
    layout = layout_dag(names, levels, dependencies(record), Mode.FULL)
    width, height = (layout.width + 2) * _CELL_X, (layout.height + 1) * _CELL_Y
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="task graph">'
    ]
    for pieces in layout.pieces.values():
        for kind, a, b, c in pieces:
            if kind == "h":
                x1, y1, x2, y2 = b, a, c, a
            else:
                x1, y1, x2, y2 = a, b, a, c
            parts.append(
                f'<line x1="{(x1 + 0.5) * _CELL_X}" y1="{(y1 + 0.5) * _CELL_Y}" '
                f'x2="{(x2 + 0.5) * _CELL_X}" y2="{(y2 + 0.5) * _CELL_Y}" stroke="#777"/>'
            )
    for row, columns in layout.arrows.items():
        for x in columns:
            cx, cy = x * _CELL_X, (row + 0.5) * _CELL_Y
            parts.append(
                f'<path d="M{cx} {cy - 4} L{cx + _CELL_X} {cy} L{cx} {cy + 4} Z" fill="#777"/>'
            )
    for box in layout.boxes.values():
        status = facts_.final.get(box.task, PENDING)
        fill, stroke = STATUS_COLOURS[status]
        dash = ' stroke-dasharray="4 3"' if status == DASHED else ""
        parts.append(
            f'<g class="task status-{_e(status)}"><title>{_e(box.task)}: {_e(status)}</title>'
            f'<rect x="{box.x * _CELL_X}" y="{box.y * _CELL_Y + 2}" '
            f'width="{box.width * _CELL_X}" height="{box.height * _CELL_Y - 4}" rx="4" '
            f'fill="{fill}" stroke="{stroke}"{dash}/>'
            f'<text x="{(box.x + 1) * _CELL_X}" y="{(box.mid_y + 0.75) * _CELL_Y}">'
            f"{_e(box.task)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts) + _legend(facts_)


def _legend(facts_: Facts) -> str:
    """The colours of the statuses the DAG shows, named."""
    items = []
    for status in sorted(set(facts_.final.values())):
        fill, stroke = STATUS_COLOURS[status]
        dash = ";border-style:dashed" if status == DASHED else ""
        items.append(
            f'<span class="legend"><span class="swatch" style="background:{fill};'
            f'border-color:{stroke}{dash}"></span>{_e(status)}</span>'
        )
    return f'<p class="legend-row">{"".join(items)}</p>'


def timeline_svg(facts_: Facts) -> str:
    """Each attempt as a bar on the wall clock, one row per attempt ("" without timings)."""
    spans = attempt_spans(facts_.record.events)
    if not spans:
        return ""
    start = min(s.start for s in spans)
    total = max(max(s.end for s in spans) - start, 1e-9)
    label_w, bar_w, row_h = 220, 600, 18
    height = row_h * len(spans) + 24
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 80}" '
        f'height="{height}" role="img" aria-label="timeline">'
    ]
    for i, span in enumerate(spans):
        fill, stroke = STATUS_COLOURS.get(str(span.status), STATUS_COLOURS[PENDING])
        x = label_w + (span.start - start) / total * bar_w
        w = max((span.end - span.start) / total * bar_w, 1.0)
        y = i * row_h
        parts.append(
            f'<text x="0" y="{y + 13}">{_e(span.task)} #{span.attempt}</text>'
            f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{row_h - 4}" '
            f'fill="{fill}" stroke="{stroke}"/>'
        )
    parts.append(
        f'<text x="{label_w}" y="{height - 4}">0 s</text>'
        f'<text x="{label_w + bar_w - 40}" y="{height - 4}">{total:.3f} s</text></svg>'
    )
    return "".join(parts)


def _table(header: list[str], rows: list[list[str]], status_column: int | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            css = f' class="status-{_e(cell)}"' if i == status_column else ""
            cells.append(f"<td{css}>{_e(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _failure(facts_: Facts) -> str:
    event = facts_.first_failure
    if event is None:
        return "<p>No attempt failed.</p>"
    error = event.error or {"type": "?", "message": ""}
    html = (
        f"<p>Task <b>{_e(event.task)}</b>, attempt {event.attempt}: "
        f"<code>{_e(error['type'])}</code> {_e(error['message'])}</p>"
    )
    if event.traceback:
        html += f"<pre>{_block(event.traceback)}</pre>"
    return html


def html_report(facts_: Facts) -> str:
    """The report as one HTML document (inline CSS and SVG, no script)."""
    record = facts_.record
    doc = record.document
    name = _e(doc["workflow"]["name"])
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">",
        f"<title>Run report: {name}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Run report: {name}</h1>",
        f'<p>Status: <b class="status-{_e(record.status)}">{_e(record.status)}</b></p>',
    ]
    if record.redacted:
        keys = ", ".join(record.redacted)
        out.append(
            f"<p>Redacted keys: {_e(keys)} (values shown as <code>&lt;redacted&gt;</code>)</p>"
        )
    changed = what_if(record)
    if changed is not None:
        out.append(f"<p>{_e(changed)}</p>")
    out += ["<h2>Versions</h2>", _table(["what", "version"], versions(record))]
    out += ["<h2>DAG</h2>", dag_svg(facts_)]
    out += ["<h2>First failure</h2>", _failure(facts_)]
    timeline = timeline_svg(facts_)
    if timeline:
        out += ["<h2>Timeline</h2>", timeline]
    header = ["seq", "task", "status", "attempt", "duration", "error"]
    out += ["<h2>Trace</h2>", _table(header, trace_rows(record), status_column=2)]
    logs = failure_logs(facts_)
    if logs:
        out.append("<h2>Logs of failed tasks</h2>")
        for task, attempt, text in logs:
            out.append(f"<p>{_e(task)}, attempt {attempt}:</p><pre>{_block(text)}</pre>")
    digests = [[k, v] for k, v in sorted(record.digests.items())]
    out += ["<h2>Digests</h2>", _table(["part", "sha256"], digests)]
    out += ["<h2>Replay and verify</h2>", f"<pre>{_block(chr(10).join(commands(facts_)))}</pre>"]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def render_report(record: RunRecord, fmt: str, source: str) -> str:
    """The report of ``record`` as ``markdown`` or ``html``; ``source`` names the export in
    the commands it shows."""
    found = facts(record, source)
    return html_report(found) if fmt == "html" else markdown_report(found)
