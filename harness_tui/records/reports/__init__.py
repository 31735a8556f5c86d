"""Bug reports of a run: Markdown and a self-contained HTML page, with its timeline."""
