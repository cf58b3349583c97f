"""OpenAI Responses (``/v1/responses``), to and from the core's turns (pure functions).

Input items become turns: a ``message`` (or an item with only ``role`` and ``content``) of any role,
``function_call`` items joined to the assistant turn they follow (one turn making every call of a
step), and ``function_call_output`` items as tool results. ``instructions`` is the preamble. The query
is the last user message; the items after it are sent verbatim. ``reasoning`` items before the query
are the model's private state and are left out (an id-less history is valid without them); other
item types are refused, as is ``previous_response_id`` (AFM packs only the history it is sent).

Back: the packed context's leading system messages become ``instructions``, the rest input items.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import InvalidInput
from ...core.turns import Turn, as_turn
from .split import Split, checked, forwarded

TEXT_PARTS = ("input_text", "output_text", "text")
SKIPPED = ("reasoning",)


def split_responses(body: dict[str, Any]) -> Split:
    """Split a Responses request body; ``InvalidInput`` names what cannot be packed."""
    if body.get("previous_response_id"):
        raise InvalidInput("previous_response_id is not supported: send the whole input; AFM packs what it is sent")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise InvalidInput("instructions must be a string")
    items = body.get("input")
    if isinstance(items, str):
        checked([_said(items)])
        return Split(instructions, [], items, [])
    if not isinstance(items, list) or not items:
        raise InvalidInput("input must be a string or a non-empty list of items")
    users = [i for i, item in enumerate(items) if _kind(item) == "message" and item.get("role") == "user"]
    if not users:
        raise InvalidInput("input must contain a user message (the query)")
    q = users[-1]
    history = _turns(items[:q])
    query = _said(_text(items[q].get("content")))
    checked([query, *(t.content for t in history)])
    return Split(instructions, history, query, [dict(item) for item in items[q + 1 :]])


def _said(query: str) -> str:
    """The query, which must say something: a blank one would leave nothing to forward."""
    if not query.strip():
        raise InvalidInput("the query (the last user message) is empty")
    return query


def _kind(item: Any) -> str:
    if not isinstance(item, dict):
        raise InvalidInput("every input item must be an object")
    return str(item.get("type", "message"))


def _turns(items: list[dict[str, Any]]) -> list[Turn]:
    turns: list[Turn] = []
    for item in items:
        kind = _kind(item)
        if kind == "message":
            role = item.get("role")
            turns.append(
                as_turn({"role": "system" if role == "developer" else role, "content": _text(item.get("content"))})
            )
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "name": item.get("name"), "arguments": item.get("arguments", "{}")}
            turns.append(_with_call(turns, call))
        elif kind == "function_call_output":
            output = item.get("output")
            turns.append(as_turn({"role": "tool", "content": _text(output), "tool_call_id": item.get("call_id")}))
        elif kind not in SKIPPED:
            raise InvalidInput(
                f"input items of type {kind[:40]!r} cannot be packed (message, function_call and "
                "function_call_output can)"
            )
    return turns


def _with_call(turns: list[Turn], call: dict[str, Any]) -> Turn:
    """The assistant turn a ``function_call`` item belongs to: the one right before it (its words, or the
    step's earlier calls), taken off ``turns`` and given the call; else a new one."""
    if turns and turns[-1].role == "assistant" and not turns[-1].tool_call_id:
        last = turns.pop()
        return as_turn({"role": "assistant", "content": last.content, "tool_calls": [*last.tool_calls, call]})
    return as_turn({"role": "assistant", "content": "", "tool_calls": [call]})


def _text(content: Any) -> str:
    """A message's or an output's text: a string, or its text parts joined (other parts are refused)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InvalidInput("content must be a string or a list of parts")
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") not in TEXT_PARTS or not isinstance(part.get("text"), str):
            raise InvalidInput("only text content parts are supported")
        texts.append(part["text"])
    return "\n".join(texts)


def responses_body(body: dict[str, Any], packed: list[dict[str, Any]], split: Split) -> dict[str, Any]:
    """The request to forward: the client's fields, ``instructions`` and ``input`` from the packed context
    (OpenAI chat messages, the query last) followed by the items after the query, verbatim."""
    out, rest = forwarded(body, packed, "instructions", "input")
    out["input"] = [item for m in rest for item in _items(m)] + split.trailing
    return out


def _items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One chat message as input items."""
    if message["role"] == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"], "output": message["content"]}]
    items = (
        [{"type": "message", "role": message["role"], "content": message["content"]}] if message.get("content") else []
    )
    for call in message.get("tool_calls") or ():
        function = call["function"]
        items.append(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": function["name"],
                "arguments": function["arguments"],
            }
        )
    return items
