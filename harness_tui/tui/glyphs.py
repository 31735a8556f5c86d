"""Marker glyphs shared by the widgets (status glyphs are in :mod:`.looks`)."""

from __future__ import annotations

BREAKPOINT = "●"
NEXT = "▶"
