"""``python -m harness_tui.schemas``: regenerate the shipped JSON Schemas."""

from harness_tui.schemas import write_schemas

write_schemas()
