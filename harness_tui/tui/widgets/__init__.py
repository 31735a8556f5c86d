"""Widgets of the workbench: each renders one role and posts messages up."""
