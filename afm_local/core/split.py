"""Which part of a conversation that arrives whole is which: the one split rule every door shares.

A request (a proxy's body, an adapter's messages) is a list of turns. The **query** (the instruction) is
the last user turn that says something: text, or an image or a file; a user turn that only carries
tool results is not one. The **preamble** is the API's own instructions field when it has one, else a
leading system turn when there is history before the query. The turns between them are the
**history**; the turns after the query are the **loop** (an agent's current tool calls and their
results, or an assistant prefix): packed like the history and sent after the query, so the whole request
is within the budget. The formats convert their blocks to turns first, then call ``split_turns``; so do
the framework adapters, so a conversation is split the same way whichever door it comes through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InvalidInput
from .turns import Turn


@dataclass(frozen=True, slots=True)
class Split:
    """A request, split: the preamble, the history before the query, the query, the loop after it, and the
    query's own image and file parts as the caller sent them (OpenAI content parts)."""

    preamble: str | None
    history: tuple[Turn, ...]
    query: str
    loop: tuple[Turn, ...] = ()
    query_parts: tuple[dict[str, Any], ...] = ()
    query_turn: Turn | None = None  # the query as a turn (its attachments are checked and priced)


def says_something(turn: Turn) -> bool:
    """Whether a turn has text that is not blank, or an image or a file."""
    return bool(turn.content.strip() or turn.attachments)


def query_position(turns: Sequence[Turn]) -> int | None:
    """The index of the query: the last user turn that says something (``None`` when there is none)."""
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "user" and says_something(turns[i]):
            return i
    return None


def split_turns(
    turns: Sequence[Turn], preamble: str | None = None, query_parts: tuple[dict[str, Any], ...] = ()
) -> Split:
    """Split ``turns`` (``preamble``: the API's own instructions field, if it has one); ``InvalidInput`` when
    there is no query."""
    q = query_position(turns)
    if q is None:
        raise InvalidInput("messages must contain a user message with text (the query)")
    start = 0
    if preamble is None and q > 0 and turns[0].role == "system":
        start, preamble = 1, turns[0].content
    for i in range(q + 1, len(turns)):
        if turns[i].role == "user" and not says_something(turns[i]):
            raise InvalidInput("a user message after the query says nothing (an empty message is refused upstream)")
    query = turns[q]
    return Split(preamble, tuple(turns[start:q]), query.content, tuple(turns[q + 1 :]), query_parts, query)


FOCUS_CHARS = 1000  # of the agent's latest action, beside the query


def loop_focus(query: str, loop: Sequence[Turn]) -> str:
    """What a request with a tool loop is scored against: the query, and what the agent is doing now (its
    newest assistant turn's words and calls), so the results that bear on the next step rank first."""
    for turn in reversed(loop):
        if turn.role == "assistant":
            calls = " ".join(f"{c.name} {c.arguments}" for c in turn.tool_calls)
            action = f"{turn.content} {calls}".strip()[:FOCUS_CHARS]
            return f"{query}\n{action}" if action else query
    return query
