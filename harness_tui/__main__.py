"""``python -m harness_tui``."""

from harness_tui.cli import main

main()
