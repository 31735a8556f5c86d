"""The Textual workbench: renders engine state; every decision stays in the engine."""
