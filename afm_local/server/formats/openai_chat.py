"""OpenAI chat completions, split into what AFM packs (pure functions).

Every message becomes a core ``Turn`` (``core.turns.as_turn``: tool calls and their results, images and
files included; ``developer`` is OpenAI's newer name for ``system``), then ``core.split.split_turns``
decides: the last user message is the query, a leading ``system`` / ``developer`` message (when there is
history before the query) the preamble, the messages between them the history, the messages after the
query (the current tool loop) the loop. The query's own images and files go with it as the client sent
them. A ``tool`` message must name the call it answers (``tool_call_id``), as the API requires. The packed
context is already in this format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.errors import InvalidInput
from ...core.parts import content_of
from ...core.split import Split, query_position, split_turns
from ...core.turns import Turn, as_turn
from ...core.vocabulary import ROLES
from ..schemas import ChatMessageIn
from .split import checked, media_parts


def text_content(content: str | list[dict[str, Any]] | None) -> str:
    """A message's text: a string as is, or its text parts joined by newlines (its image and file parts
    are checked here and read at ingest)."""
    return content_of(content)[0] if content is not None else ""


def split_chat(messages: Sequence[ChatMessageIn]) -> Split:
    """Split an OpenAI ``messages`` list; ``InvalidInput`` (naming the message) for an unknown role, a tool
    message without its ``tool_call_id``, oversized text or no query."""
    turns = [_turn(i, m) for i, m in enumerate(messages)]
    checked(turns)
    q = query_position(turns)
    return split_turns(turns, query_parts=media_parts(messages[q].content) if q is not None else ())


def _turn(i: int, m: ChatMessageIn) -> Turn:
    if m.role not in ROLES and m.role != "developer":
        raise InvalidInput(f"unknown role {m.role[:32]!r}; expected one of {', '.join(ROLES)}", f"messages[{i}].role")
    fields = m.model_dump()
    if m.role == "tool" and not fields.get("tool_call_id"):
        raise InvalidInput("a tool message must name the call it answers (tool_call_id)", f"messages[{i}].tool_call_id")
    try:
        return as_turn({**fields, "role": "system" if m.role == "developer" else m.role, "content": m.content or ""})
    except InvalidInput as exc:
        raise InvalidInput(str(exc), exc.param or f"messages[{i}]") from None


def chat_body(body: dict[str, Any], packed: list[dict[str, Any]], split: Split) -> dict[str, Any]:
    """The request to forward: the client's fields less ``afm``, and the packed context as ``messages``
    (already in this format; a preamble the client sent as ``developer`` keeps that role)."""
    out = {key: value for key, value in body.items() if key not in ("afm", "messages")}
    first = body["messages"][0] if body.get("messages") else {}
    if packed and split.preamble is not None and first.get("role") == "developer" and packed[0]["role"] == "system":
        packed = [{**packed[0], "role": "developer"}, *packed[1:]]
    out["messages"] = packed
    return out
