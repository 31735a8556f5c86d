"""Keymap conflicts: two binding ids on one key of one screen would leave one of them with no
key at all (Textual keeps one binding per key), without a word."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .actions import DIFF, GLOBAL, INSPECTOR, WORKBENCH, Action

SCOPES: tuple[tuple[Action, ...], ...] = ((*WORKBENCH, *INSPECTOR, *GLOBAL), (*DIFF, *GLOBAL))
"""The actions whose keys share one screen (a modal's own keys are its alone)."""


def _keys(keys: str) -> list[str]:
    return [key.strip() for key in keys.split(",") if key.strip()]


def conflicts(
    keymap: Mapping[str, str], scopes: Sequence[Sequence[Action]] = SCOPES
) -> dict[str, str]:
    """The remappings of ``keymap`` that would take a key another action of the same screen
    has, each with why: ``{id: "x is also other-id's key"}``. The actions the keymap leaves
    alone keep their keys first, then the remappings claim theirs in the keymap's order; one
    that would take a key already claimed is left out whole (its action keeps its own keys)."""
    dropped: dict[str, str] = {}
    order = {name: index for index, name in enumerate(keymap)}
    for scope in scopes:
        owner: dict[str, str] = {}
        for action in scope:
            if action.id not in keymap:
                for key in _keys(action.keys):
                    owner.setdefault(key, action.id)
        remapped = sorted((a for a in scope if a.id in keymap), key=lambda a: order[a.id])
        for action in remapped:
            keys = _keys(keymap[action.id])
            taken = next((key for key in keys if owner.get(key, action.id) != action.id), None)
            if taken is not None or action.id in dropped:
                if taken is not None:
                    dropped.setdefault(action.id, f"{taken} is also {owner[taken]}'s key")
                for key in _keys(action.keys):  # it keeps its own keys
                    owner.setdefault(key, action.id)
                continue
            for key in keys:
                owner[key] = action.id
    return dropped
