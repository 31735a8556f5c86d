"""The workbench in a browser (``harness-tui serve``): textual-serve behind our own guard.

:mod:`.guard` decides who may talk to the server (pure policy: tokens, cookies, Host and
Origin); :mod:`.command` builds the command line of the app each browser connection runs;
:mod:`.server` is the aiohttp server that applies the guard, serves a page that needs nothing
from the network and runs the app without a shell. Needs the optional ``web`` extra.
"""
