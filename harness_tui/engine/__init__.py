"""The pure core: graph, deterministic scheduler, stepping orchestrator, trace.

Standard library only. Nothing here prints, exits, reads files or imports a UI.
"""
