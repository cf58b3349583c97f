"""OpenAI chat requests, split into what AFM packs and what it passes through (a pure function).

Which message is the query: the last ``user`` message. A leading ``system`` / ``developer`` message
(when there is history before the query) is the preamble; everything between is the history that
AFM packs, images and files included (``core.parts``); anything after the query (tool results, an
assistant prefix) is sent verbatim after the packed context, and so are the query's own images and
files (its text is what history is scored against). ``developer`` is OpenAI's newer name for ``system``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import InvalidInput
from ..core.parts import content_of
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
    query_content: str | list[dict[str, Any]] = ""  # the query as the client sent it, parts included


def text_content(content: str | list[dict[str, Any]] | None) -> str:
    """A message's text: a string as is, or its text parts joined by newlines (its image and file parts
    are checked here and read at ingest)."""
    return content_of(content)[0] if content is not None else ""


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
        as_turn({"role": "system" if m.role == "developer" else m.role, "content": m.content or ""})
        for m in messages[start:q]
    ]
    trailing = [m.model_dump(exclude_none=True) for m in messages[q + 1 :]]
    return SplitChat(preamble, history, texts[q], trailing, messages[q].content or "")
