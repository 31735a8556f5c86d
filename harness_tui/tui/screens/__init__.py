"""Screens: one per job (the workbench; the plan diff)."""
