"""A LangChain v1 agent middleware that packs the model's messages with AFM before every model call (the
``langchain`` extra).

``AFMMiddleware(max_tokens=2000)`` goes in ``create_agent(..., middleware=[...])``. Before each call it
packs the system prompt and the conversation into ``max_tokens`` (``integrations.packing``): binding
constraints verbatim, the rest whole, compressed or as one line, tool calls kept with their results,
the current tool loop included (its newest result whole when it fits). The agent's own state keeps every message: only
what the model is sent is packed. Messages cross into AFM as OpenAI chat messages, LangChain's own
``convert_to_openai_messages`` and ``convert_to_messages`` doing the conversions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import SystemMessage, convert_to_messages, convert_to_openai_messages
except ImportError as exc:  # pragma: no cover - the message names the fix
    raise ImportError("LangChain is not installed: pip install 'afm-local[langchain]'", name=exc.name) from exc

from ..core.config import AFMConfig, Render
from ..core.turns import as_turn
from ..engine import ArtifactCache
from .packing import ManagerFactory, local_factory, pack_turns


class AFMMiddleware(AgentMiddleware):
    """Packs what the model is sent into ``max_tokens`` (``config``: the engine's settings)."""

    def __init__(
        self,
        max_tokens: int = 2000,
        *,
        config: AFMConfig | None = None,
        render: Render | None = None,
        manager: ManagerFactory | None = None,
    ) -> None:
        super().__init__()
        self.max_tokens, self.render = max_tokens, render
        self.manager = manager or local_factory(config)
        self.cache = ArtifactCache(max_entries=100_000)

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        return handler(self.packed(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(await asyncio.to_thread(self.packed, request))

    def packed(self, request: ModelRequest) -> ModelRequest:
        """``request`` with its system message and messages packed into ``max_tokens``."""
        system = [request.system_message] if request.system_message is not None else []
        given: list[Any] = [*system, *request.messages]
        turns = [as_turn(m) for m in convert_to_openai_messages(given)]
        packed, at, q = pack_turns(turns, self.max_tokens, self.manager(self.cache), self.render)
        if not packed:
            return request
        head = packed[0]["content"] if packed[0]["role"] == "system" else None
        start = 1 if head is not None else 0
        before: list[Any] = convert_to_messages(packed[start:at])
        after: list[Any] = convert_to_messages(packed[at + 1 :])
        return request.override(  # the query goes as it was given: its images too
            system_message=SystemMessage(content=head) if head is not None else None,
            messages=[*before, given[q], *after],
        )
