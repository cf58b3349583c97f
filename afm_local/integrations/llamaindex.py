"""A LlamaIndex memory backed by AFM (the ``llamaindex`` extra): ``AFMMemory.from_defaults(max_tokens=2000)``
for ``FunctionAgent(..., memory=...)``, ``agent.run(..., memory=memory)`` or a chat engine.

The memory keeps every message it is given; ``get`` returns them packed into ``max_tokens`` for the
latest user message (or ``input``): binding constraints verbatim, the rest whole, compressed or as one
line, an assistant's tool calls kept with their results (``integrations.packing``).
"""

from __future__ import annotations

import json
from typing import Any

try:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
    from llama_index.core.memory.types import BaseMemory
except ImportError as exc:  # pragma: no cover - the message names the fix
    raise ImportError("LlamaIndex is not installed: pip install 'afm-local[llamaindex]'", name=exc.name) from exc

from pydantic import Field, PrivateAttr

from ..core.config import AFMConfig, Render
from ..core.turns import Turn, as_turn
from ..engine import ArtifactCache
from .packing import ManagerFactory, local_factory, pack_turns


class AFMMemory(BaseMemory):
    """Every message, kept; what ``get`` returns, packed by AFM into ``max_tokens``."""

    max_tokens: int = Field(2000, gt=0, description="Tokens for everything ``get`` returns.")
    render: Render | None = Field(None, description="chat or structured (default: the config's).")
    _messages: list[ChatMessage] = PrivateAttr(default_factory=list)
    _manager: ManagerFactory = PrivateAttr()
    _cache: ArtifactCache = PrivateAttr(default_factory=lambda: ArtifactCache(max_entries=100_000))

    @classmethod
    def class_name(cls) -> str:
        return "AFMMemory"

    @classmethod
    def from_defaults(
        cls,
        max_tokens: int = 2000,
        config: AFMConfig | None = None,
        manager: ManagerFactory | None = None,
        **kwargs: Any,
    ) -> AFMMemory:
        memory = cls(max_tokens=max_tokens, **kwargs)
        memory._manager = manager or local_factory(config)
        return memory

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        messages = list(self._messages)
        if input is not None:
            messages.append(ChatMessage(role=MessageRole.USER, content=input))
        packed, q = pack_turns([turn_of(m) for m in messages], self.max_tokens, self._manager(self._cache), self.render)
        if not packed:
            return messages
        if input is not None:
            packed = packed[:-1]  # the caller sends its input itself
        return [message_of(m) for m in packed] + messages[q + 1 :]

    def get_all(self) -> list[ChatMessage]:
        return list(self._messages)

    def put(self, message: ChatMessage) -> None:
        self._messages.append(message)

    def set(self, messages: list[ChatMessage]) -> None:
        self._messages = list(messages)

    def reset(self) -> None:
        self._messages = []


def turn_of(message: ChatMessage) -> Turn:
    """A LlamaIndex message as a turn: its text, its tool calls (``ToolCallBlock`` blocks or OpenAI-style
    ``tool_calls`` in ``additional_kwargs``), the call a tool message answers."""
    extra = message.additional_kwargs
    calls: list[Any] = [
        {"id": b.tool_call_id, "name": b.tool_name, "arguments": b.tool_kwargs}
        for b in message.blocks
        if isinstance(b, ToolCallBlock)
    ]
    if not calls:  # an LLM wrapper may leave them in OpenAI's shape, or both (then the blocks say it)
        calls = [c if isinstance(c, dict) else c.model_dump() for c in extra.get("tool_calls") or ()]
    text = "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock))
    role = str(message.role.value)
    return as_turn(
        {
            "role": role if role in ("system", "user", "assistant", "tool") else "assistant",
            "content": text,
            "tool_calls": calls or None,
            "tool_call_id": extra.get("tool_call_id"),
        }
    )


def message_of(message: dict[str, Any]) -> ChatMessage:
    """A packed chat message as a LlamaIndex message (tool calls as ``ToolCallBlock`` blocks)."""
    blocks: list[Any] = [TextBlock(text=message["content"])] if message.get("content") else []
    for call in message.get("tool_calls") or ():
        function = call["function"]
        blocks.append(ToolCallBlock(tool_call_id=call["id"], tool_name=function["name"], tool_kwargs=_kwargs(function)))
    extra = {"tool_call_id": message["tool_call_id"]} if message.get("tool_call_id") else {}
    return ChatMessage(role=MessageRole(message["role"]), blocks=blocks, additional_kwargs=extra)


def _kwargs(function: dict[str, Any]) -> dict[str, Any] | str:
    try:
        value = json.loads(function["arguments"])
    except ValueError:
        return function["arguments"]
    return value if isinstance(value, dict) else function["arguments"]
