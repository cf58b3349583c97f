"""Request bodies of the HTTP API with their size limits, as pydantic models (the OpenAPI spec
comes from these). Roles, importance names and the render and packing names are the core's."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from ..core.config import Packing, Render, check_budget
from ..core.types import Importance, Role

MAX_CONTENT_BYTES = 64 * 1024  # one message's text
MAX_PARTS = 64  # content parts of one message (AFMConfig.max_attachments bounds the images and files)
MAX_BUDGET = 1_000_000
MAX_MESSAGES = 5_000  # per stateless / chat request (the body limit bounds it first in practice)

Budget = Annotated[
    int,
    BeforeValidator(lambda value: check_budget(value, MAX_BUDGET)),
    Field(description=f"Tokens for everything sent, 1 to {MAX_BUDGET:,}."),
]


def _upper(value: object) -> object:
    return value.upper() if isinstance(value, str) else value


def _check_bytes(value: str | None, limit: int = MAX_CONTENT_BYTES) -> str | None:
    if value is not None and len(value.encode("utf-8", "surrogatepass")) > limit:
        raise ValueError(f"text is longer than {limit} bytes")
    return value


def _check_parts(value: str | list[dict[str, Any]] | None) -> str | list[dict[str, Any]] | None:
    """At most ``MAX_PARTS`` parts, and the text (a string, or the text parts together) within
    ``MAX_CONTENT_BYTES``."""
    if isinstance(value, list):
        if len(value) > MAX_PARTS:
            raise ValueError(f"a message has at most {MAX_PARTS} content parts")
        _check_bytes("\n".join(str(p.get("text", "")) for p in value if p.get("type") == "text"))
    else:
        _check_bytes(value)
    return value


class MessageIn(BaseModel):
    """One history message: text, or OpenAI content parts (``text``, ``image_url``, ``file``)."""

    model_config = ConfigDict(extra="forbid")
    role: Role
    content: (
        Annotated[str, Field(max_length=MAX_CONTENT_BYTES)]
        | Annotated[list[dict[str, Any]], Field(max_length=MAX_PARTS)]
    ) = Field(
        description="Text (at most 64 KiB of UTF-8), or content parts: text, image_url (a base64 data: URL, "
        "or an http(s) URL that is never fetched) and file (file_data: a PDF, text or Markdown file).",
    )
    importance: Importance | None = Field(None, description="Overrides the classifier (and any tag).")

    @field_validator("importance", mode="before")
    @classmethod
    def _importance_upper(cls, value: object) -> object:
        return _upper(value)

    _content = field_validator("content")(_check_parts)


class ContextOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(max_length=MAX_CONTENT_BYTES)
    budget_tokens: Budget
    system_preamble: str | None = Field(None, max_length=MAX_CONTENT_BYTES)
    render: Render | None = None
    packing: Packing | None = None

    @field_validator("query", "system_preamble")
    @classmethod
    def _text_bytes(cls, value: str | None) -> str | None:
        return _check_bytes(value)


class StatelessContextRequest(ContextOptions):
    messages: list[MessageIn] = Field(max_length=MAX_MESSAGES)


class SessionCreated(BaseModel):
    id: str
    created: float


class AFMOptions(BaseModel):
    """The ``afm`` extension field of a chat completion request."""

    model_config = ConfigDict(extra="forbid")
    budget_tokens: Budget | None = None
    render: Render | None = None
    packing: Packing | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str = Field(max_length=32)
    content: str | list[dict[str, Any]] | None = None

    @field_validator("content")
    @classmethod
    def _parts_count(cls, value: str | list[dict[str, Any]] | None) -> str | list[dict[str, Any]] | None:
        if isinstance(value, list) and len(value) > MAX_PARTS:  # the text's size: openai_compat.split_chat
            raise ValueError(f"a message has at most {MAX_PARTS} content parts")
        return value


class ChatCompletionRequest(BaseModel):
    """OpenAI's request; fields other than ``messages`` and ``afm`` are forwarded unchanged."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, max_length=256)
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    max_tokens: int | None = Field(None, ge=1, le=131072)
    temperature: float | None = Field(None, ge=0, le=2)
    afm: AFMOptions | None = None


class ResponsesRequest(BaseModel):
    """OpenAI's Responses request; fields other than ``input``, ``instructions`` and ``afm`` are forwarded."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, max_length=256)
    input: str | list[dict[str, Any]] = Field(max_length=MAX_MESSAGES)
    instructions: str | None = Field(None, max_length=MAX_CONTENT_BYTES)
    stream: bool = False
    afm: AFMOptions | None = None


class MessagesRequest(BaseModel):
    """Anthropic's Messages request; fields other than ``messages``, ``system`` and ``afm`` are forwarded."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, max_length=256)
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_MESSAGES)
    system: str | list[dict[str, Any]] | None = None
    stream: bool = False
    afm: AFMOptions | None = None
