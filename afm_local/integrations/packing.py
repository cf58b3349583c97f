"""What the framework adapters share: pack a framework's conversation the way the proxies do.

The turns are split by the proxies' own rule (``core.split.split_turns``): the last user turn is the
query, a leading system turn the preamble, the turns before the query the history and the turns after it
(the agent's current tool loop) the loop, packed too and sent after the query, so the whole request is
within the budget (``FocusManager.pack_split``). Each call packs on a fresh ``FocusManager`` over one shared
artifact cache, so a message is embedded, classified and compressed once, however often it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.config import AFMConfig, Render
from ..core.split import query_position, split_turns
from ..core.turns import Turn
from ..engine import ArtifactCache, FocusManager

ManagerFactory = Callable[[ArtifactCache], FocusManager]


def local_factory(config: AFMConfig | None = None) -> ManagerFactory:
    """Managers over the on-device models (``afm_local.local_manager``), built on the first call."""

    def make(cache: ArtifactCache) -> FocusManager:
        from ..defaults import local_manager

        return local_manager(config, cache=cache)

    return make


def pack_turns(
    turns: Sequence[Turn], budget: int, manager: FocusManager, render: Render | None = None
) -> tuple[list[dict[str, Any]], int, int]:
    """The packed request (OpenAI chat messages) of ``turns`` on a fresh ``manager``, where the query stands in
    it, and where it stood in ``turns`` (the caller may send its own query message there, images and all).
    Without a user turn there is nothing to pack: no messages come back (positions ``-1``)."""
    q = query_position(turns)
    if q is None:
        return [], -1, -1
    ctx = manager.pack_split(split_turns(turns), budget, render=render)
    return list(ctx.messages), ctx.query_index, q
