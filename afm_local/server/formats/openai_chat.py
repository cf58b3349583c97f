"""OpenAI chat completions, split into what AFM packs and what it passes through (pure functions).

Which message is the query: the last ``user`` message. A leading ``system`` / ``developer`` message
(when there is history before the query) is the preamble; everything between is the history that
AFM packs, tool calls and their results included (``core.turns.as_turn`` reads them); anything after
the query (the current tool loop, an assistant prefix) is sent verbatim after the packed context.
``developer`` is OpenAI's newer name for ``system``. The packed context is already in this format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.errors import InvalidInput
from ...core.turns import as_turn
from ...core.types import ROLES
from ..schemas import ChatMessageIn
from .split import Split, checked


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


def split_chat(messages: Sequence[ChatMessageIn]) -> Split:
    """Split an OpenAI ``messages`` list; ``InvalidInput`` for unknown roles, oversized text or no query."""
    texts = [text_content(m.content) for m in messages]
    for m in messages:
        if m.role not in ROLES and m.role != "developer":
            raise InvalidInput(f"unknown role {m.role[:32]!r}; expected one of {', '.join(ROLES)}")
    checked(texts)
    user_positions = [i for i, m in enumerate(messages) if m.role == "user"]
    if not user_positions:
        raise InvalidInput("messages must contain a user message (the query)")
    q = user_positions[-1]
    start, preamble = 0, None
    if messages[0].role in ("system", "developer") and q > 0:
        start, preamble = 1, texts[0]
    history = [
        as_turn({**m.model_dump(), "role": "system" if m.role == "developer" else m.role, "content": t})
        for m, t in zip(messages[start:q], texts[start:q])
    ]
    trailing = [m.model_dump(exclude_none=True) for m in messages[q + 1 :]]
    return Split(preamble, history, texts[q], trailing)
