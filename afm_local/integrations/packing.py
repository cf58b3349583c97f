"""What the framework adapters share: pack a framework's conversation the way the proxies do.

The last user turn is the query, a leading system turn the preamble, the turns between them the history
AFM packs (tool calls and their results as units); the turns after the query (the agent's current tool
loop) are the caller's to send verbatim. Each call packs on a fresh ``FocusManager`` over one shared
artifact cache, so a message is embedded, classified and compressed once, however often it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.config import AFMConfig, Render
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
) -> tuple[list[dict[str, Any]], int]:
    """The packed context (OpenAI chat messages, the query last) of ``turns`` on ``manager``, and the
    position of the query in ``turns``: what follows it is sent after the context as it is. Without a
    user turn there is nothing to pack: the turns come back as they are (position ``len(turns)``)."""
    asking = [i for i, t in enumerate(turns) if t.role == "user"]
    if not asking:
        return [], len(turns)
    q = asking[-1]
    start = 1 if turns and turns[0].role == "system" and q > 0 else 0
    manager.add_messages(turns[start:q])
    preamble = turns[0].content if start else None
    ctx = manager.build_context(turns[q].content, budget, preamble, render=render)
    return list(ctx.messages), q
