"""Request bodies of the HTTP API with their size limits, as pydantic models (the OpenAPI spec
comes from these). Roles, importance names and the render and packing names are the core's."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from ..core.config import Packing, Render, check_budget
from ..core.types import Importance, Role

MAX_CONTENT_BYTES = 64 * 1024  # one message's content
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


class MessageIn(BaseModel):
    """One history message."""

    model_config = ConfigDict(extra="forbid")
    role: Role
    content: str = Field(max_length=MAX_CONTENT_BYTES, description="At most 64 KiB of UTF-8.")
    importance: Importance | None = Field(None, description="Overrides the classifier (and any tag).")

    @field_validator("importance", mode="before")
    @classmethod
    def _importance_upper(cls, value: object) -> object:
        return _upper(value)

    @field_validator("content")
    @classmethod
    def _content_bytes(cls, value: str) -> str | None:
        return _check_bytes(value)


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
