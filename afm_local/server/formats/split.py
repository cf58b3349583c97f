"""The rules the three proxy formats share beyond the split itself (``core.split``): the size check, the
forwarded body's fields, and the query's own image and file parts.

Every format converts its messages or items to core ``Turn`` records and calls ``core.split.split_turns``:
the history before the query and the loop after it (an agent's current tool calls and results) are both
packed within the budget and written back in the API's own shape. The query's own images and files go
with it as the client sent them (``with_query_parts``), checked and counted (``FocusManager.pack_split``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...core.errors import InvalidInput
from ...core.split import Split
from ...core.turns import Turn
from ..schemas import MAX_CONTENT_BYTES, MAX_TOOL_RESULT_BYTES


def checked(turns: Iterable[Turn], where: str = "messages") -> None:
    """``InvalidInput`` when a text is over its limit: a tool's result may be large (a file, a log), any other
    message's text is at most ``MAX_CONTENT_BYTES``."""
    for i, turn in enumerate(turns):
        limit = MAX_TOOL_RESULT_BYTES if turn.role == "tool" else MAX_CONTENT_BYTES
        size = len(turn.content.encode("utf-8", "surrogatepass"))
        if size > limit:
            what = "a tool result" if turn.role == "tool" else f"a {turn.role} message"
            raise InvalidInput(f"{what} is {size:,} bytes; the limit is {limit:,}", f"{where}[{i}].content")


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


def media_parts(content: object) -> tuple[dict[str, Any], ...]:
    """The image and file parts of an OpenAI message content (checked by ``core.parts.content_of``)."""
    if not isinstance(content, list):
        return ()
    return tuple(part for part in content if part.get("type") != "text")


def with_query_parts(messages: list[dict[str, Any]], query_index: int, split: Split) -> list[dict[str, Any]]:
    """The packed context with the query (at ``query_index``) given back its own images and files."""
    if not split.query_parts:
        return messages
    query = {"role": "user", "content": [{"type": "text", "text": split.query}, *split.query_parts]}
    return [*messages[:query_index], query, *messages[query_index + 1 :]]
