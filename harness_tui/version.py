"""The version of harness-tui, in a module of its own: what records it (an export's ``tool``)
and what prints it (``-V``) need not import the package face."""

__version__ = "0.1.0"
