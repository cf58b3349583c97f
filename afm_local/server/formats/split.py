"""What every proxy format splits a request into, and the rules the three share.

The query is the last user message that says something (not only tool results); what comes before
it is the preamble (a leading system message or the API's own instructions field) and the history
AFM packs; what comes after it (the current tool loop: calls and their results) is sent verbatim,
in the API's own shape, after the packed context.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...core.errors import InvalidInput
from ...core.turns import Turn
from ..schemas import MAX_CONTENT_BYTES


@dataclass(frozen=True, slots=True)
class Split:
    """A request, split: the preamble, the history AFM packs, the query, what follows it verbatim."""

    preamble: str | None
    history: list[Turn]
    query: str
    trailing: list[dict[str, Any]]


def checked(texts: Iterable[str]) -> None:
    """``InvalidInput`` when a text is over the per-message limit."""
    for text in texts:
        if len(text.encode("utf-8", "surrogatepass")) > MAX_CONTENT_BYTES:
            raise InvalidInput(f"a message is longer than {MAX_CONTENT_BYTES} bytes")


def leading_system(messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """A packed context's leading system messages (the preamble, or the structured memory) joined, and the
    rest: the APIs that keep instructions apart from the conversation take them there."""
    k = 0
    while k < len(messages) and messages[k]["role"] == "system":
        k += 1
    texts = [m["content"] for m in messages[:k] if m.get("content")]
    return ("\n\n".join(texts) if texts else None), messages[k:]
