"""Workflow files: YAML in, engine objects out. Loading never runs user code (I6)."""
