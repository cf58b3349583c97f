"""OpenAI chat requests, split into what AFM packs and what it passes through (a pure function).

Which message is the query: the last ``user`` message. A leading ``system`` / ``developer`` message
(when there is history before the query) is the preamble; everything between is the history that
AFM packs; anything after the query (tool results, an assistant prefix) is sent verbatim after the
packed context. ``developer`` is OpenAI's newer name for ``system``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import InvalidInput
from ..core.turns import Turn, as_turn
from ..core.types import ROLES
from .schemas import MAX_CONTENT_BYTES, ChatMessageIn


@dataclass(frozen=True, slots=True)
class SplitChat:
    """An OpenAI request, split: the preamble, the history AFM packs, the query, what follows it verbatim."""

    preamble: str | None
    history: list[Turn]
    query: str
    trailing: list[dict[str, Any]]


def text_content(content: str | list[dict[str, Any]] | None) -> str:
    """A message's text: a string as is, or its text parts joined by newlines (other parts are refused)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise InvalidInput("only text content parts are supported")
        parts.append(part["text"])
    return "\n".join(parts)


def split_chat(messages: Sequence[ChatMessageIn]) -> SplitChat:
    """Split an OpenAI ``messages`` list; ``InvalidInput`` for unknown roles, oversized text or no query."""
    texts = [text_content(m.content) for m in messages]
    for m, text in zip(messages, texts):
        if m.role not in ROLES and m.role != "developer":
            raise InvalidInput(f"unknown role {m.role[:32]!r}; expected one of {', '.join(ROLES)}")
        if len(text.encode("utf-8", "surrogatepass")) > MAX_CONTENT_BYTES:
            raise InvalidInput(f"a message is longer than {MAX_CONTENT_BYTES} bytes")
    user_positions = [i for i, m in enumerate(messages) if m.role == "user"]
    if not user_positions:
        raise InvalidInput("messages must contain a user message (the query)")
    q = user_positions[-1]
    start, preamble = 0, None
    if messages[0].role in ("system", "developer") and q > 0:
        start, preamble = 1, texts[0]
    history = [
        as_turn({"role": "system" if m.role == "developer" else m.role, "content": t})
        for m, t in zip(messages[start:q], texts[start:q])
    ]
    trailing = [m.model_dump(exclude_none=True) for m in messages[q + 1 :]]
    return SplitChat(preamble, history, texts[q], trailing)
