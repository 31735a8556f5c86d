"""Typed modal dialogs: each returns its result through ``dismiss``."""
