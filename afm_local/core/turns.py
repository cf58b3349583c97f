"""The one record of an incoming chat message, and the one converter every edge uses to make it.

``add_messages`` rows, the HTTP API's messages, the session store's rows, the OpenAI request splitter
and the command line's JSON all become a ``Turn`` through ``as_turn`` (as langchain's
``convert_to_messages`` makes one message type of every input), so a message's fields are validated,
and named, in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from .errors import InvalidInput
from .parts import Attachment, content_of
from .types import IMPORTANCE_NAMES, ROLES, Importance, Role


@dataclass(frozen=True, slots=True)
class Turn:
    """One message as a caller gives it, before ingest.

    ``importance`` is the caller's explicit word: it beats a leading tag and the classifier. ``id`` is
    kept when given, so a session restored from the store keeps its ids. ``content`` is the text (the
    text parts joined); ``attachments`` are its images and files in the order given (``core.parts``).
    Tool calls (``tool_calls``, ``tool_call_id``) are meant to join this record as optional fields read
    by ``as_turn``, not as a second message type.
    """

    role: Role
    content: str
    importance: Importance | None = None
    id: str | None = None
    attachments: tuple[Attachment, ...] = ()


def as_turn(value: Turn | Mapping[str, Any]) -> Turn:
    """A ``Turn`` from a ``Turn`` or a mapping with ``role``, ``content`` (a string, or a list of OpenAI
    content parts: ``text``, ``image_url``, ``file``) and optionally ``importance`` (a name in any case,
    or an ``Importance``), ``id`` and ``attachments`` (``Attachment`` records, as the store keeps them);
    other keys are ignored. ``InvalidInput`` names what is wrong."""
    if isinstance(value, Turn):
        return value
    if not isinstance(value, Mapping) or not isinstance(value.get("content"), str | list | tuple):
        raise InvalidInput('a message must be an object with a string "role" and a "content" (text or parts)')
    role = value.get("role")
    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    text, attachments = content_of(value["content"])
    stored = value.get("attachments") or ()
    if not all(isinstance(a, Attachment) for a in stored):
        raise InvalidInput('"attachments" must hold Attachment records; send images and files as content parts')
    found = value.get("id")
    return Turn(
        cast(Role, role),
        text,
        importance_of(value.get("importance")),
        str(found) if found else None,
        attachments + tuple(stored),
    )


def importance_of(value: object) -> Importance | None:
    """An explicit importance: ``None``, an ``Importance``, or its name in any case."""
    if value is None or isinstance(value, Importance):
        return value
    try:
        return Importance(str(value).upper())
    except ValueError:
        raise InvalidInput(f"unknown importance {value!r}; expected one of {', '.join(IMPORTANCE_NAMES)}") from None
