"""The rules an upstream API applies to a request's history (roles, pairing of tool calls and results, order),
written from each API's documentation, as a list of violations (empty: the request is valid).

The upstream test server rejects a request that breaks one, and the property tests hold every packed
history to them: no orphan tool result, no call without its results, roles and order each API accepts.
"""

from __future__ import annotations

import json
from typing import Any


def chat_violations(messages: list[dict[str, Any]]) -> list[str]:
    """OpenAI chat completions: a ``tool`` message answers a call of the assistant message right before the
    run of tool messages it belongs to; every call of an assistant message is answered before any other
    message; ids are unique; arguments are JSON text."""
    problems: list[str] = []
    if not messages:
        return ["messages is empty"]
    waiting: list[str] = []
    seen: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            problems.append(f"messages[{i}]: unknown role {role!r}")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in waiting:
                problems.append(f"messages[{i}]: tool message {call_id!r} answers no pending call (orphan)")
            else:
                waiting.remove(call_id)
            if not isinstance(m.get("content"), str):
                problems.append(f"messages[{i}]: tool content must be a string")
            continue
        if waiting:
            problems.append(f"messages[{i}]: tool calls {waiting} have no result before this message")
            waiting = []
        calls = m.get("tool_calls") or []
        if calls and role != "assistant":
            problems.append(f"messages[{i}]: only assistant messages may have tool_calls")
        if not calls and not isinstance(m.get("content"), (str, list)):
            problems.append(f"messages[{i}]: content is required without tool_calls")
        problems += _chat_parts(i, role, m.get("content"))
        for c in calls:
            if c.get("id") in seen:
                problems.append(f"messages[{i}]: duplicate tool call id {c.get('id')!r}")
            seen.add(c.get("id"))
            waiting.append(c.get("id"))
            problems += _json_problem(i, c.get("function", {}).get("arguments"))
    if waiting:
        problems.append(f"tool calls {waiting} have no result")
    return problems


def responses_violations(body: dict[str, Any]) -> list[str]:
    """OpenAI Responses: message items of known roles; every ``function_call_output`` follows the
    ``function_call`` with its ``call_id``, and every ``function_call`` has an output."""
    items = body.get("input")
    if isinstance(items, str):
        return []
    if not isinstance(items, list) or not items:
        return ["input must be a string or a non-empty list"]
    problems: list[str] = []
    calls: set[str] = set()
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "message":
            if item.get("role") not in ("user", "assistant", "system", "developer"):
                problems.append(f"input[{i}]: unknown role {item.get('role')!r}")
            if not isinstance(item.get("content"), (str, list)):
                problems.append(f"input[{i}]: content must be a string or a list")
            problems += _responses_parts(i, item.get("role"), item.get("content"))
        elif kind == "function_call":
            if item.get("call_id") in calls:
                problems.append(f"input[{i}]: duplicate call_id {item.get('call_id')!r}")
            calls.add(item.get("call_id"))
            problems += _json_problem(i, item.get("arguments"))
        elif kind == "function_call_output":
            if item.get("call_id") not in calls:
                problems.append(f"input[{i}]: output for {item.get('call_id')!r} has no function_call before it")
            answered.add(item.get("call_id"))
        else:
            problems.append(f"input[{i}]: unexpected item type {kind!r}")
    problems += [f"No tool output found for function call {c}" for c in sorted(calls - answered)]
    return problems


def anthropic_violations(body: dict[str, Any]) -> list[str]:
    """Anthropic Messages: ``user`` and ``assistant`` only, alternating and starting with ``user``; every
    ``tool_use`` answered by a ``tool_result`` in the very next (user) message, results first in it; no
    ``tool_result`` without its ``tool_use`` in the message right before; no empty text block;
    ``max_tokens`` given."""
    problems: list[str] = [] if isinstance(body.get("max_tokens"), int) else ["max_tokens is required"]
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "user":
        problems.append("the first message must use the user role")
    previous_uses: list[str] = []
    for i, m in enumerate(messages):
        role, blocks = m.get("role"), _blocks(m.get("content"))
        if role not in ("user", "assistant"):
            problems.append(f"messages[{i}]: unexpected role {role!r}")
        if i and role == messages[i - 1].get("role"):
            problems.append(f"messages[{i}]: roles must alternate")
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        for tool_id in results:
            if tool_id not in previous_uses:
                problems.append(f"messages[{i}]: tool_result {tool_id!r} has no tool_use in the previous message")
        if previous_uses and sorted(results) != sorted(previous_uses):
            problems.append(f"messages[{i}]: tool_use ids {previous_uses} need tool_result blocks here")
        kinds = [b.get("type") for b in blocks]
        first_other = next((k for k, kind in enumerate(kinds) if kind != "tool_result"), len(kinds))
        if "tool_result" in kinds[first_other:]:
            problems.append(f"messages[{i}]: tool_result blocks must come first")
        if any(b.get("type") == "text" and not b.get("text") for b in blocks):
            problems.append(f"messages[{i}]: text content blocks must be non-empty")
        if not blocks:
            problems.append(f"messages[{i}]: content must not be empty")
        problems += _anthropic_media(i, role, blocks)
        previous_uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
    if previous_uses:
        problems.append(f"tool_use ids {previous_uses} have no tool_result")
    return problems


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _json_problem(i: int, arguments: Any) -> list[str]:
    if not isinstance(arguments, str):
        return [f"item {i}: arguments must be a JSON string"]
    try:
        json.loads(arguments)
    except ValueError:
        return [f"item {i}: arguments are not valid JSON"]
    return []


IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def _image_url(where: str, url: Any) -> list[str]:
    if not isinstance(url, str) or not url.startswith(("data:image/", "http://", "https://")):
        return [f"{where}: an image URL must be an image data: URL or an http(s) URL"]
    if url.startswith("data:") and url.split(";", 1)[0][5:] not in IMAGE_TYPES:
        return [f"{where}: unsupported image type {url.split(';', 1)[0][5:]!r}"]
    return []


def _chat_parts(i: int, role: Any, content: Any) -> list[str]:
    """OpenAI chat: image and file parts only in user messages; an image part is ``{"url", "detail"?}``."""
    problems: list[str] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type")
        if kind not in ("text", "image_url", "file"):
            problems.append(f"messages[{i}]: unknown content part {kind!r}")
        elif kind != "text" and role != "user":
            problems.append(f"messages[{i}]: {kind} parts are only supported in user messages")
        elif kind == "image_url":
            problems += _image_url(f"messages[{i}]", (part.get("image_url") or {}).get("url"))
            if (part.get("image_url") or {}).get("detail", "auto") not in ("auto", "low", "high"):
                problems.append(f"messages[{i}]: unknown detail")
    return problems


def _responses_parts(i: int, role: Any, content: Any) -> list[str]:
    """OpenAI Responses: ``input_text`` / ``input_image`` / ``input_file`` parts, images and files from the user."""
    problems: list[str] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type")
        if kind not in ("input_text", "output_text", "input_image", "input_file"):
            problems.append(f"input[{i}]: unknown content part {kind!r}")
        elif kind in ("input_image", "input_file") and role != "user":
            problems.append(f"input[{i}]: {kind} is only supported in user messages")
        elif kind == "input_image":
            problems += _image_url(f"input[{i}]", part.get("image_url"))
        elif kind == "input_file" and not str(part.get("file_data", "")).startswith("data:"):
            problems.append(f"input[{i}]: input_file needs file_data as a data: URL")
    return problems


def _anthropic_media(i: int, role: Any, blocks: list[dict[str, Any]]) -> list[str]:
    """Anthropic Messages: image and document blocks only from the user, with a source the API takes."""
    problems: list[str] = []
    for b in blocks:
        if b.get("type") not in ("image", "document"):
            continue
        source = b.get("source") or {}
        if role != "user":
            problems.append(f"messages[{i}]: {b.get('type')} blocks are only supported in user messages")
        elif source.get("type") == "url":
            problems += _image_url(f"messages[{i}]", source.get("url")) if b["type"] == "image" else []
        elif b["type"] == "image" and (source.get("type") != "base64" or source.get("media_type") not in IMAGE_TYPES):
            problems.append(f"messages[{i}]: an image source must be base64 of {', '.join(IMAGE_TYPES)} or a url")
        elif b["type"] == "document" and (source.get("type"), source.get("media_type")) not in (
            ("base64", "application/pdf"),
            ("text", "text/plain"),
        ):
            problems.append(f"messages[{i}]: a document source must be base64 PDF or plain text")
    return problems
