"""Anthropic Messages (``/v1/messages``), to and from the core's turns (pure functions).

A user message's ``tool_result`` blocks become tool turns (answering the assistant's ``tool_use`` blocks
of the message before), its text blocks one user turn; an assistant message's text and ``tool_use``
blocks become one assistant turn making those calls. ``system`` is the preamble. The query is the last
user message with text (not only blanks: the API refuses an empty text block; its images and documents go
with it as sent); the messages after it (the current tool loop) are packed too (``core.split``) and
written back after it. A user message's ``image`` blocks (a base64 or
URL source; a URL is never fetched) and ``document`` blocks (a base64 or text source) become OpenAI chat's
``image_url`` and ``file`` parts; a source that names a file kept elsewhere (``file``, a document's
``url``) is refused, as is an image in a ``tool_result`` or an assistant message. ``thinking`` blocks
before the query are the model's private state and are left out; other blocks are refused.

Back: the packed context's leading system messages become ``system`` (the client's own system blocks, their
``cache_control`` included, when the preamble is sent as it came); tool results go into the next
user message, first; consecutive messages of one role are joined, so roles alternate as the API
requires, and a context that would start with the assistant starts with a one-line user note. Image
parts become ``image`` blocks (base64, or a URL), file parts ``document`` blocks.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ...core.errors import InvalidInput
from ...core.parts import as_data_url, data_url
from ...core.split import Split, query_position, split_turns
from ...core.turns import Turn, as_turn
from .split import checked, forwarded, media_parts

SKIPPED = ("thinking", "redacted_thinking")
MEDIA = ("image", "document")
OPENING = "[earlier conversation]"  # the user turn a context that starts with the assistant needs


def split_messages(body: dict[str, Any]) -> Split:
    """Split a Messages request body; ``InvalidInput`` names what cannot be packed."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidInput("messages must be a non-empty list", "messages")
    turns: list[Turn] = []
    origins: list[int] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise InvalidInput('every message must be an object with role "user" or "assistant"', f"messages.{i}")
        try:
            made = _turns(m)
        except InvalidInput as exc:
            raise InvalidInput(str(exc), exc.param or f"messages.{i}.content") from None
        turns += made
        origins += [i] * len(made)
    checked(turns)
    q = query_position(turns)
    parts = media_parts(_content(_blocks(messages[origins[q]].get("content")))) if q is not None else ()
    return split_turns(turns, _system(body.get("system")), parts)


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
    """One message as turns: a user's tool results first, then its words, images and documents; an
    assistant's words and calls."""
    blocks = _blocks(message.get("content"))
    for b in blocks:
        if b.get("type") not in ("text", "tool_use", "tool_result", *MEDIA, *SKIPPED):
            _refuse(
                f"content blocks of type {str(b.get('type'))[:40]!r} cannot be packed (text, image, document and "
                "tool blocks can)"
            )
    content = _content(blocks)
    if message["role"] == "assistant":
        calls = [
            {"id": b.get("id"), "name": b.get("name"), "arguments": b.get("input", {})}
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        return [as_turn({"role": "assistant", "content": content, "tool_calls": calls or None})]
    turns = [
        as_turn({"role": "tool", "content": _result_text(b), "tool_call_id": b.get("tool_use_id")})
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    return turns + ([as_turn({"role": "user", "content": content})] if content or not turns else [])


def _content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """The words of a message's blocks and its images and documents, as OpenAI chat content."""
    text = "\n".join(_texts(blocks))
    media = [_part(b) for b in blocks if b.get("type") in MEDIA]
    if not media:
        return text
    return ([{"type": "text", "text": text}] if text else []) + media


def _part(block: dict[str, Any]) -> dict[str, Any]:
    """An ``image`` or ``document`` block as an OpenAI ``image_url`` or ``file`` part."""
    found = block.get("source")
    source: dict[str, Any] = found if isinstance(found, dict) else {}
    kind, data, image = source.get("type"), source.get("data"), block["type"] == "image"
    if image and kind == "url" and isinstance(source.get("url"), str):
        return {"type": "image_url", "image_url": {"url": source["url"], "detail": "auto"}}
    if kind == "base64" and isinstance(data, str):
        url = as_data_url(str(source.get("media_type") or ""), data)
    elif not image and kind == "text" and isinstance(data, str):
        url = as_data_url("text/plain", base64.b64encode(data.encode("utf-8", "surrogatepass")).decode("ascii"))
    else:
        sources = "a base64 or url source" if image else "a base64 or text source"
        return _refuse(
            f"{'an image' if image else 'a document'} block needs {sources}; a {str(kind)[:16]!r} source names "
            "a file kept elsewhere (never fetched)"
        )
    if image:
        return {"type": "image_url", "image_url": {"url": url, "detail": "auto"}}
    return {"type": "file", "file": {"file_data": url, "filename": str(block.get("title") or "")[:200]}}


def _result_text(block: dict[str, Any]) -> str:
    if not block.get("tool_use_id"):
        raise InvalidInput("a tool_result block must name the tool_use it answers (tool_use_id)")
    content = block.get("content", "")
    if not isinstance(content, str) and any(b.get("type") != "text" for b in _blocks(content)):
        _refuse("a tool_result carries text only here; send images and documents in a user message")
    text = content if isinstance(content, str) else "\n".join(_texts(content))
    return f"[tool error] {text}" if block.get("is_error") else text


def _refuse(message: str) -> Any:
    raise InvalidInput(message)


def messages_body(body: dict[str, Any], packed: list[dict[str, Any]], split: Split) -> dict[str, Any]:
    """The request to forward: the client's fields, ``system`` and ``messages`` from the packed context
    (OpenAI chat messages, the query last) followed by the messages after the query, verbatim."""
    out, rest = forwarded(body, packed, "system", "messages")
    system = body.get("system")
    if isinstance(system, list) and out.get("system") == _system(system):  # sent as given: cache_control kept
        out["system"] = system
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
    out["messages"] = joined
    return out


def _message(m: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """One chat message as a role and its blocks (a system message in the middle is said by the user)."""
    if m["role"] == "tool":
        return "user", [{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}]
    content = m.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    blocks = [_block(p) for p in parts if p["type"] != "text" or p["text"]]
    for call in m.get("tool_calls") or ():
        function = call["function"]
        blocks.append({"type": "tool_use", "id": call["id"], "name": function["name"], "input": _input(function)})
    return ("assistant" if m["role"] == "assistant" else "user"), blocks


def _block(part: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat content part (of a user message) as a Messages content block."""
    if part["type"] == "text":
        return {"type": "text", "text": part["text"]}
    url = part["image_url"]["url"] if part["type"] == "image_url" else part["file"]["file_data"]
    mime, data = data_url(url) or ("", "")
    if part["type"] == "image_url":
        source = {"type": "base64", "media_type": mime, "data": data} if data else {"type": "url", "url": url}
        return {"type": "image", "source": source}
    if mime.startswith("text/"):
        text = base64.b64decode(data).decode("utf-8", "replace")
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}}
    return {"type": "document", "source": {"type": "base64", "media_type": mime or "application/pdf", "data": data}}


def _input(function: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as the ``input`` object a ``tool_use`` block carries."""
    try:
        value = json.loads(function["arguments"])
    except ValueError:
        return {"arguments": function["arguments"]}
    return value if isinstance(value, dict) else {"value": value}
