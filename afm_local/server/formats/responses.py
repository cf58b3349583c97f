"""OpenAI Responses (``/v1/responses``), to and from the core's turns (pure functions).

Input items become turns: a ``message`` (or an item with only ``role`` and ``content``) of any role,
``function_call`` items joined to the assistant turn they follow (one turn making every call of a
step), and ``function_call_output`` items as tool results. A user message's ``input_image`` (an
``image_url``: a data: URL, or an http(s) URL that is never fetched) and ``input_file`` (``file_data``)
parts become OpenAI chat's ``image_url`` and ``file`` parts; one by ``file_id`` or ``file_url`` names a
file kept elsewhere and is refused, as is an image in a tool's output. ``instructions`` is the
preamble. The turns are split by ``core.split.split_turns``: the query is the last user message with
text or media (its images and files go with it as sent); the items after it (the current tool loop) are
packed too and written back after it. ``reasoning`` items are the model's private state and are left out
(an id-less history is valid without them); other item types are refused, as is ``previous_response_id``
(AFM packs only the history it is sent), and a ``function_call_output`` without its ``call_id``.

Back: the packed context's leading system messages become ``instructions``, the rest input items (image
parts as ``input_image``, file parts as ``input_file``).
"""

from __future__ import annotations

from typing import Any

from ...core.errors import InvalidInput
from ...core.parts import content_of
from ...core.split import Split, query_position, split_turns
from ...core.turns import Turn, as_turn
from .split import checked, forwarded, media_parts

TEXT_PARTS = ("input_text", "output_text", "text")
SKIPPED = ("reasoning",)


def split_responses(body: dict[str, Any]) -> Split:
    """Split a Responses request body; ``InvalidInput`` names what cannot be packed."""
    if body.get("previous_response_id"):
        raise InvalidInput(
            "previous_response_id is not supported: send the whole input; AFM packs what it is sent",
            "previous_response_id",
        )
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise InvalidInput("instructions must be a string", "instructions")
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise InvalidInput("input must be a string or a non-empty list of items", "input")
    turns, origins = _turns(items)
    checked(turns, "input")
    q = query_position(turns)
    parts = media_parts(_content(items[origins[q]].get("content"))) if q is not None else ()
    return split_turns(turns, instructions, parts)


def _kind(item: Any) -> str:
    if not isinstance(item, dict):
        raise InvalidInput("every input item must be an object")
    return str(item.get("type", "message"))


def _turns(items: list[dict[str, Any]]) -> tuple[list[Turn], list[int]]:
    """The items as turns, and the item each turn came from."""
    turns: list[Turn] = []
    origins: list[int] = []
    for i, item in enumerate(items):
        kind = _kind(item)
        try:
            if kind == "message":
                role = item.get("role")
                content = _content(item.get("content"))
                turns.append(as_turn({"role": "system" if role == "developer" else role, "content": content}))
            elif kind == "function_call":
                call = {"id": item.get("call_id"), "name": item.get("name"), "arguments": item.get("arguments", "{}")}
                joined = bool(turns) and turns[-1].role == "assistant" and not turns[-1].tool_call_id
                turns.append(_with_call(turns, call))
                if joined:
                    origins.pop()
            elif kind == "function_call_output":
                if not item.get("call_id"):
                    raise InvalidInput("a function_call_output must name the call it answers (call_id)")
                output = item.get("output")
                turns.append(as_turn({"role": "tool", "content": _text(output), "tool_call_id": item.get("call_id")}))
            elif kind not in SKIPPED:
                raise InvalidInput(
                    f"input items of type {kind[:40]!r} cannot be packed (message, function_call and "
                    "function_call_output can)"
                )
            else:
                continue
        except InvalidInput as exc:
            raise InvalidInput(str(exc), exc.param or f"input[{i}]") from None
        origins.append(i)
    return turns, origins


def _with_call(turns: list[Turn], call: dict[str, Any]) -> Turn:
    """The assistant turn a ``function_call`` item belongs to: the one right before it (its words, or the
    step's earlier calls), taken off ``turns`` and given the call; else a new one."""
    if turns and turns[-1].role == "assistant" and not turns[-1].tool_call_id:
        last = turns.pop()
        return as_turn({"role": "assistant", "content": last.content, "tool_calls": [*last.tool_calls, call]})
    return as_turn({"role": "assistant", "content": "", "tool_calls": [call]})


def _content(content: Any) -> str | list[dict[str, Any]]:
    """A message's content as OpenAI chat content: a string, or its text, image and file parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise InvalidInput("content must be a string or a list of parts")
    return [_part(part) for part in content]


def _part(part: Any) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in TEXT_PARTS and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        return {"type": "image_url", "image_url": {"url": part["image_url"], "detail": part.get("detail") or "auto"}}
    if kind == "input_file" and isinstance(part.get("file_data"), str):
        return {"type": "file", "file": {"file_data": part["file_data"], "filename": part.get("filename") or ""}}
    if kind in ("input_image", "input_file"):
        raise InvalidInput(
            f"an {kind} part needs its bytes ({'image_url' if kind == 'input_image' else 'file_data'}: a data: "
            "URL); a file_id or file_url names a file kept elsewhere, which is never fetched"
        )
    raise InvalidInput(
        f"content parts of type {str(kind)[:40]!r} cannot be packed (input_text, input_image and input_file can)"
    )


def _text(content: Any) -> str:
    """A tool's output: a string, or its text parts joined (an image in a tool's output is refused)."""
    parts = _content(content)
    if not isinstance(parts, str) and any(p["type"] != "text" for p in parts):
        raise InvalidInput("a function_call_output carries text only here; send images and files in a user message")
    return content_of(parts)[0]


def responses_body(body: dict[str, Any], packed: list[dict[str, Any]], split: Split) -> dict[str, Any]:
    """The request to forward: the client's fields, ``instructions`` and ``input`` from the packed context
    (OpenAI chat messages, the query last) followed by the items after the query, verbatim."""
    out, rest = forwarded(body, packed, "instructions", "input")
    out["input"] = [item for m in rest for item in _items(m)]
    return out


def _items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One chat message as input items."""
    if message["role"] == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"], "output": message["content"]}]
    content = message.get("content")
    if isinstance(content, list):
        content = [_input_part(part) for part in content]
    items = [{"type": "message", "role": message["role"], "content": content}] if content else []
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


def _input_part(part: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat content part (of a user message) as a Responses input part."""
    if part["type"] == "image_url":
        image = part["image_url"]
        return {"type": "input_image", "image_url": image["url"], "detail": image.get("detail") or "auto"}
    if part["type"] == "file":
        file = part["file"]
        return {"type": "input_file", "file_data": file["file_data"], "filename": file.get("filename") or "file"}
    return {"type": "input_text", "text": part["text"]}
