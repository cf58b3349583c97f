"""The one record of an incoming chat message, and the one converter every edge uses to make it.

``add_messages`` rows, the HTTP API's messages, the session store's rows, the proxy formats (OpenAI
chat, Responses, Anthropic Messages), the framework adapters and the command line's JSON all become a
``Turn`` through ``as_turn`` (as langchain's ``convert_to_messages`` makes one message type of every
input), so a message's fields are validated, and named, in one place. ``chat_message`` is the way
back: a ``Turn`` as an OpenAI chat message, the shape ``build_context`` sends.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from .errors import InvalidInput
from .parts import Attachment, content_of
from .vocabulary import IMPORTANCE_NAMES, ROLES, Importance, Role

MAX_TOOL_CALLS = 128  # calls in one assistant message
MAX_ID_CHARS = 256  # a tool call's id
MAX_NAME_CHARS = 128  # a tool's name


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call an assistant message makes: its id, the tool's name, the arguments as JSON text."""

    id: str
    name: str
    arguments: str = "{}"


@dataclass(frozen=True, slots=True)
class Turn:
    """One message as a caller gives it, before ingest.

    ``importance`` is the caller's explicit word: it beats a leading tag and the classifier. ``id`` is
    kept when given, so a session restored from the store keeps its ids. ``content`` is the text (the
    text parts joined); ``attachments`` are its images and files in the order given (``core.parts``). An
    assistant turn may make ``tool_calls``; a ``tool`` turn answers the call ``tool_call_id`` (``name``:
    the tool's, when known); a ``tool`` turn without one is plain text, as the sessions API has always
    taken it. Only a user turn has attachments, as only a user message can carry images in the chat APIs
    (so a tool call and its result carry text only: a unit's forms are its API messages).
    """

    role: Role
    content: str
    importance: Importance | None = None
    id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    attachments: tuple[Attachment, ...] = ()


def as_turn(value: Turn | Mapping[str, Any]) -> Turn:
    """A ``Turn`` from a ``Turn`` or a mapping with ``role``, ``content`` (a string, or a list of OpenAI
    content parts: ``text``, ``image_url``, ``file``) and optionally ``importance`` (a name in any case,
    or an ``Importance``), ``id``, ``tool_calls`` (OpenAI's shape or ``{"id", "name", "arguments"}``),
    ``tool_call_id``, ``name`` and ``attachments`` (``Attachment`` records, as the store keeps them);
    other keys are ignored. ``InvalidInput`` names what is wrong."""
    if isinstance(value, Turn):
        return value
    if not isinstance(value, Mapping):
        raise InvalidInput('a message must be an object with a string "role" and a "content" (text or parts)')
    role = value.get("role")
    if role not in ROLES:
        raise InvalidInput(f"unknown role {str(role)[:32]!r}; expected one of {', '.join(ROLES)}")
    calls = tool_calls_of(value.get("tool_calls"))
    content = value.get("content")
    if content is None and calls:
        content = ""
    if not isinstance(content, str | list | tuple):
        raise InvalidInput('a message must be an object with a string "role" and a "content" (text or parts)')
    if calls and role != "assistant":
        raise InvalidInput(f"only an assistant message may make tool calls, not a {role} message")
    text, attachments = content_of(content)
    stored = value.get("attachments") or ()
    if not all(isinstance(a, Attachment) for a in stored):
        raise InvalidInput('"attachments" must hold Attachment records; send images and files as content parts')
    call_id, name = _short(value.get("tool_call_id"), "tool_call_id"), _short(value.get("name"), "name")
    call_id = call_id if role == "tool" else None
    attachments += tuple(stored)
    if attachments and role != "user":
        raise InvalidInput(
            f"only a user message may carry images and files (the chat APIs take them nowhere else), not a {role} "
            "message"
        )
    found = value.get("id")
    return Turn(
        cast(Role, role),
        text,
        importance_of(value.get("importance")),
        str(found) if found else None,
        calls,
        call_id,
        name if role == "tool" else None,
        attachments,
    )


def tool_calls_of(value: object) -> tuple[ToolCall, ...]:
    """Tool calls from OpenAI's ``[{"id", "type": "function", "function": {"name", "arguments"}}]`` or the
    flat ``[{"id", "name", "arguments"}]``; arguments given as an object are written as JSON."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or len(value) > MAX_TOOL_CALLS:
        raise InvalidInput(f'"tool_calls" must be a list of at most {MAX_TOOL_CALLS} calls')
    calls = []
    for item in value:
        if isinstance(item, ToolCall):
            calls.append(item)
            continue
        if not isinstance(item, Mapping):
            raise InvalidInput('a tool call must be an object with "id" and a function "name"')
        nested = item.get("function")
        function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else item
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id, name = _short(item.get("id"), "tool call id"), _short(function.get("name"), "tool name")
        if not call_id or not name:
            raise InvalidInput('a tool call must be an object with "id" and a function "name"')
        calls.append(ToolCall(call_id, name, arguments))
    if len({c.id for c in calls}) < len(calls):
        raise InvalidInput("two tool calls of one message share an id")
    return tuple(calls)


def _short(value: object, what: str) -> str | None:
    """An id or a name: a non-empty string of bounded length, or ``None``."""
    if value is None or value == "":
        return None
    limit = MAX_NAME_CHARS if "name" in what else MAX_ID_CHARS
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInput(f"{what} must be a string of at most {limit} characters")
    return value


def chat_message(turn: Turn) -> dict[str, Any]:
    """``turn`` as an OpenAI chat message: tool calls in OpenAI's shape (content ``None`` when a call has
    no text), a tool result with its ``tool_call_id``."""
    message: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.tool_calls:
        message["content"] = turn.content or None
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    if turn.tool_call_id is not None:
        message["tool_call_id"] = turn.tool_call_id
    return message


def importance_of(value: object) -> Importance | None:
    """An explicit importance: ``None``, an ``Importance``, or its name in any case."""
    if value is None or isinstance(value, Importance):
        return value
    try:
        return Importance(str(value).upper())
    except ValueError:
        raise InvalidInput(f"unknown importance {value!r}; expected one of {', '.join(IMPORTANCE_NAMES)}") from None
