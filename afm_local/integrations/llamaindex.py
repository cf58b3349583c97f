"""A LlamaIndex memory backed by AFM (the ``llamaindex`` extra): ``AFMMemory.from_defaults(max_tokens=2000)``
for ``FunctionAgent(..., memory=...)``, ``agent.run(..., memory=memory)`` or a chat engine.

The memory keeps every message it is given; ``get`` returns them packed into ``max_tokens`` for the
latest user message (or ``input``): binding constraints verbatim, the rest whole, compressed or as one
line, an assistant's tool calls kept with their results (``integrations.packing``). A user message's
``ImageBlock`` and ``DocumentBlock`` blocks are packed like any image or file (their bytes, their local
file, or an http(s) image URL, which is never fetched); the latest user message comes back as it was.
"""

from __future__ import annotations

import json
from typing import Any

try:
    from llama_index.core.base.llms.types import (
        ChatMessage,
        DocumentBlock,
        ImageBlock,
        MessageRole,
        TextBlock,
        ToolCallBlock,
    )
    from llama_index.core.memory.types import BaseMemory
    from llama_index.core.utils import resolve_binary
except ImportError as exc:  # pragma: no cover - the message names the fix
    raise ImportError("LlamaIndex is not installed: pip install 'afm-local[llamaindex]'", name=exc.name) from exc

from pydantic import Field, PrivateAttr

from ..core.config import AFMConfig, Render
from ..core.errors import InvalidInput
from ..core.parts import as_data_url, data_url
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
        turns = [turn_of(m) for m in messages]
        packed, at, q = pack_turns(turns, self.max_tokens, self._manager(self._cache), self.render)
        if not packed:
            return messages
        # the latest user message as it was given (its images too); the caller sends its input itself
        query = [messages[q]] if input is None else []
        return [message_of(m) for m in packed[:at]] + query + [message_of(m) for m in packed[at + 1 :]]

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
    media = [_part(b) for b in message.blocks if isinstance(b, ImageBlock | DocumentBlock)]
    role = str(message.role.value)
    return as_turn(
        {
            "role": role if role in ("system", "user", "assistant", "tool") else "assistant",
            "content": ([{"type": "text", "text": text}] if text else []) + media if media else text,
            "tool_calls": calls or None,
            "tool_call_id": extra.get("tool_call_id"),
        }
    )


def _part(block: ImageBlock | DocumentBlock) -> dict[str, Any]:
    """An image or document block as an OpenAI ``image_url`` or ``file`` part: its bytes (held, or read from
    its local file), or an image's http(s) URL kept as a reference."""
    url = str(block.url) if block.url is not None else ""
    if isinstance(block, ImageBlock):
        held, mime, detail = block.image, block.image_mimetype, block.detail or "auto"
        if url.startswith(("http://", "https://")):
            return {"type": "image_url", "image_url": {"url": url, "detail": detail}}
    else:
        held, mime, detail = block.data, block.document_mimetype, ""
    if url and not url.startswith("data:"):
        raise InvalidInput("a document block by URL is never fetched: give its data or a local path")
    if not url:
        payload = resolve_binary(held if isinstance(held, bytes) else None, block.path, as_base64=True).read()
        url = as_data_url(mime or "", payload.decode("ascii"))
    if isinstance(block, ImageBlock):
        return {"type": "image_url", "image_url": {"url": url, "detail": detail}}
    return {"type": "file", "file": {"file_data": url, "filename": block.title or ""}}


def message_of(message: dict[str, Any]) -> ChatMessage:
    """A packed chat message as a LlamaIndex message (tool calls as ``ToolCallBlock`` blocks, image parts as
    ``ImageBlock`` blocks)."""
    content = message.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []
    blocks: list[Any] = [_block(p) for p in parts]
    for call in message.get("tool_calls") or ():
        function = call["function"]
        blocks.append(ToolCallBlock(tool_call_id=call["id"], tool_name=function["name"], tool_kwargs=_kwargs(function)))
    extra = {"tool_call_id": message["tool_call_id"]} if message.get("tool_call_id") else {}
    return ChatMessage(role=MessageRole(message["role"]), blocks=blocks, additional_kwargs=extra)


def _block(part: dict[str, Any]) -> TextBlock | ImageBlock:
    if part["type"] == "text":
        return TextBlock(text=part["text"])
    url, detail = part["image_url"]["url"], part["image_url"].get("detail")
    found = data_url(url)
    if found is None:
        return ImageBlock(url=url, detail=detail)
    return ImageBlock(image=found[1].encode("ascii"), image_mimetype=found[0] or None, detail=detail)


def _kwargs(function: dict[str, Any]) -> dict[str, Any] | str:
    try:
        value = json.loads(function["arguments"])
    except ValueError:
        return function["arguments"]
    return value if isinstance(value, dict) else function["arguments"]
