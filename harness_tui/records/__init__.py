"""Runs at rest: export and import, the run store, replay and divergence."""
