"""Anthropic Messages (``/v1/messages``), to and from the core's turns (pure functions).

A user message's ``tool_result`` blocks become tool turns (answering the assistant's ``tool_use`` blocks
of the message before), its text blocks one user turn; an assistant message's text and ``tool_use``
blocks become one assistant turn making those calls. ``system`` is the preamble. The query is the last
user message with text (not only blanks: the API refuses an empty text block); the messages after it are
sent verbatim. ``thinking`` blocks before the query are the model's private state and are left out; other
blocks (images: issue 27) are refused.

Back: the packed context's leading system messages become ``system``; tool results go into the next
user message, first; consecutive messages of one role are joined, so roles alternate as the API
requires, and a context that would start with the assistant starts with a one-line user note.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.errors import InvalidInput
from ...core.turns import Turn, as_turn
from .split import Split, checked, forwarded

SKIPPED = ("thinking", "redacted_thinking")
OPENING = "[earlier conversation]"  # the user turn a context that starts with the assistant needs


def split_messages(body: dict[str, Any]) -> Split:
    """Split a Messages request body; ``InvalidInput`` names what cannot be packed."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty list")
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise InvalidInput('every message must be an object with role "user" or "assistant"')
    asking = [i for i, m in enumerate(messages) if m["role"] == "user" and "".join(_texts(m.get("content"))).strip()]
    if not asking:
        raise InvalidInput("messages must contain a user message with text (the query)")
    q = asking[-1]
    history = [turn for m in messages[:q] for turn in _turns(m)]
    last = _turns(messages[q])
    history += last[:-1]  # tool results that came with the query answer the calls before it
    query = last[-1].content
    preamble = _system(body.get("system"))
    checked([query, *(t.content for t in history)])
    return Split(preamble, history, query, [dict(m) for m in messages[q + 1 :]])


def _system(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return "\n".join(_texts(value)) if isinstance(value, list) else _refuse("system must be a string or text blocks")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        _refuse("content must be a string or a list of blocks")
    return content


def _texts(content: Any) -> list[str]:
    return [b["text"] for b in _blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]


def _turns(message: dict[str, Any]) -> list[Turn]:
    """One message as turns: a user's tool results first, then its words; an assistant's words and calls."""
    blocks = _blocks(message.get("content"))
    for b in blocks:
        if b.get("type") not in ("text", "tool_use", "tool_result", *SKIPPED):
            _refuse(f"content blocks of type {str(b.get('type'))[:40]!r} cannot be packed (text and tool blocks can)")
    text = "\n".join(_texts(blocks))
    if message["role"] == "assistant":
        calls = [
            {"id": b.get("id"), "name": b.get("name"), "arguments": b.get("input", {})}
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        return [as_turn({"role": "assistant", "content": text, "tool_calls": calls or None})]
    turns = [
        as_turn({"role": "tool", "content": _result_text(b), "tool_call_id": b.get("tool_use_id")})
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    return turns + ([as_turn({"role": "user", "content": text})] if text or not turns else [])


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    text = content if isinstance(content, str) else "\n".join(_texts(content))
    return f"[tool error] {text}" if block.get("is_error") else text


def _refuse(message: str) -> Any:
    raise InvalidInput(message)


def messages_body(body: dict[str, Any], packed: list[dict[str, Any]], split: Split) -> dict[str, Any]:
    """The request to forward: the client's fields, ``system`` and ``messages`` from the packed context
    (OpenAI chat messages, the query last) followed by the messages after the query, verbatim."""
    out, rest = forwarded(body, packed, "system", "messages")
    joined: list[dict[str, Any]] = []
    for role, blocks in (_message(m) for m in rest):
        if not blocks:
            continue
        if joined and joined[-1]["role"] == role:
            joined[-1]["content"] += blocks
        else:
            joined.append({"role": role, "content": blocks})
    if joined and joined[0]["role"] == "assistant":
        joined.insert(0, {"role": "user", "content": [{"type": "text", "text": OPENING}]})
    out["messages"] = joined + split.trailing
    return out


def _message(m: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """One chat message as a role and its blocks (a system message in the middle is said by the user)."""
    if m["role"] == "tool":
        return "user", [{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}]
    blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
    for call in m.get("tool_calls") or ():
        function = call["function"]
        blocks.append({"type": "tool_use", "id": call["id"], "name": function["name"], "input": _input(function)})
    return ("assistant" if m["role"] == "assistant" else "user"), blocks


def _input(function: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as the ``input`` object a ``tool_use`` block carries."""
    try:
        value = json.loads(function["arguments"])
    except ValueError:
        return {"arguments": function["arguments"]}
    return value if isinstance(value, dict) else {"value": value}
