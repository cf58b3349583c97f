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
from .types import IMPORTANCE_NAMES, ROLES, Importance, Role


@dataclass(frozen=True, slots=True)
class Turn:
    """One message as a caller gives it, before ingest.

    ``importance`` is the caller's explicit word: it beats a leading tag and the classifier. ``id`` is
    kept when given, so a session restored from the store keeps its ids. Content parts (images,
    files) and tool calls (``tool_calls``, ``tool_call_id``) are meant to join this record as
    optional fields read by ``as_turn``, not as a second message type.
    """

    role: Role
    content: str
    importance: Importance | None = None
    id: str | None = None


def as_turn(value: Turn | Mapping[str, Any]) -> Turn:
    """A ``Turn`` from a ``Turn`` or a mapping with ``role``, ``content`` and optionally ``importance``
    (a name in any case, or an ``Importance``) and ``id``; other keys are ignored. ``InvalidInput``
    names what is wrong."""
    if isinstance(value, Turn):
        return value
    if not isinstance(value, Mapping) or not isinstance(value.get("content"), str):
        raise InvalidInput('a message must be an object with string "role" and "content"')
    role = value.get("role")
    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    found = value.get("id")
    return Turn(
        cast(Role, role), value["content"], importance_of(value.get("importance")), str(found) if found else None
    )


def importance_of(value: object) -> Importance | None:
    """An explicit importance: ``None``, an ``Importance``, or its name in any case."""
    if value is None or isinstance(value, Importance):
        return value
    try:
        return Importance(str(value).upper())
    except ValueError:
        raise InvalidInput(f"unknown importance {value!r}; expected one of {', '.join(IMPORTANCE_NAMES)}") from None
