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


def forwarded(
    body: dict[str, Any], packed: list[dict[str, Any]], system: str, messages: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The forwarded request but its messages: the client's fields less ``afm`` and the two it packs, with
    the packed context's leading system messages (the preamble, or the structured memory) joined under
    ``system``, where these APIs keep instructions apart; and the rest of the packed context."""
    k = 0
    while k < len(packed) and packed[k]["role"] == "system":
        k += 1
    out = {key: value for key, value in body.items() if key not in ("afm", system, messages)}
    texts = [m["content"] for m in packed[:k] if m.get("content")]
    if texts:
        out[system] = "\n\n".join(texts)
    return out, packed[k:]
