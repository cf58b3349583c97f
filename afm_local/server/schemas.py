"""Request bodies of the HTTP API with their size limits, as pydantic models (the OpenAPI spec
comes from these). Roles, importance names and the render and packing names are the core's."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, field_validator

from ..core.config import Packing, Render, check_budget
from ..core.types import Context, Importance, Role

MAX_CONTENT_BYTES = 64 * 1024  # one message's content
MAX_BUDGET = 1_000_000
MAX_MESSAGES = 5_000  # per stateless / chat request (the body limit bounds it first in practice)

Budget = Annotated[
    int,
    Field(ge=1, le=MAX_BUDGET, description=f"Tokens for everything sent, 1 to {MAX_BUDGET:,}."),
    BeforeValidator(lambda value: _budget(value)),  # runs first: its message names the fix
]


def _budget(value: object) -> int:
    """JSON has one number type: 1676.0 is the integer JSON Schema says it is."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return check_budget(value, MAX_BUDGET)


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
    role: Literal[Role, "developer"]  # developer: OpenAI's newer name for system
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


class AnthropicMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class MessagesRequest(BaseModel):
    """Anthropic's Messages request; fields other than ``messages``, ``system`` and ``afm`` are forwarded."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, max_length=256)
    messages: list[AnthropicMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    max_tokens: int = Field(ge=1, description="Required by the Messages API.")
    system: str | list[dict[str, Any]] | None = None
    stream: bool = False
    afm: AFMOptions | None = None


# ---------------------------------------------------------------------------------------- responses
# What the routes answer, so that the OpenAPI schema states it and the fuzz tests hold the server to it.


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    message: str


class ErrorBody(BaseModel):
    """Every error: one JSON shape, one line of message, never a stack trace."""

    error: ErrorDetail


ERROR_STATUSES = {
    400: "The body is not valid JSON or UTF-8.",
    401: "Missing or wrong API key.",
    404: "No such session for this key's tenant (the same answer whether it exists elsewhere or not).",
    413: "The body is too large, or the tenant's quota (sessions, messages, bytes) would be exceeded.",
    422: "The request is invalid (the message names the field), or the budget cannot hold the constraints.",
    429: "This key's rate limit is exceeded; Retry-After says when to try again.",
    503: "The store or a model cannot be used right now; nothing was acknowledged.",
    507: "The disk is full; nothing was acknowledged.",
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text} for status, text in ERROR_STATUSES.items()
}


class SessionSummary(BaseModel):
    id: str
    created: float
    messages: int


class SessionList(BaseModel):
    sessions: list[SessionSummary]


class MessageOut(BaseModel):
    id: str
    seq: int
    role: Role
    content: str
    importance: Importance
    importance_source: str
    importance_override: Importance | None
    tag: Importance | None = Field(description="The importance tag the message starts with, if any.")
    tokens_full: int
    tokens_compressed: int
    tokens_placeholder: int
    compressed: str
    placeholder: str
    created: float | None


class SessionOut(BaseModel):
    id: str
    created: float
    messages: list[MessageOut]


class SessionErased(BaseModel):
    id: str
    deleted: bool


class TenantErased(BaseModel):
    tenant: str
    sessions_erased: int


class Usage(BaseModel):
    sessions: int
    messages: int
    bytes: int


class Limits(BaseModel):
    sessions: int | None
    messages: int | None
    bytes: int | None
    requests_per_second: float | None


class TenantInfo(BaseModel):
    tenant: str
    key_id: str
    usage: Usage
    quota: Limits


class TenantExport(BaseModel):
    """Everything a tenant stored (access under data-protection law): its sessions and their messages."""

    tenant: str
    exported: float
    sessions: list[SessionOut]


def _context_out() -> type[BaseModel]:
    """``Context.to_dict()``'s shape, made from ``core.types.Context`` itself (its fields and their types, then
    the items as ``ContextItem.to_dict`` writes them): one definition, which the schema cannot drift from."""
    hints = get_type_hints(Context)
    shape: dict[str, Any] = {name: (hints[name], ...) for name in Context.json_fields()}
    return create_model("ContextOut", **shape, items=(list[dict[str, Any]], ...))


ContextOut = _context_out()


class Health(BaseModel):
    model_config = ConfigDict(extra="allow")
    status: str
    version: str
    ready: bool
