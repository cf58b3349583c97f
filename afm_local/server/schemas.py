"""Request bodies of the HTTP API with their size limits, as pydantic models (the OpenAPI spec
comes from these). Roles, importance names and the render and packing names are the core's."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, field_validator

from ..core.config import Fill, Overflow, Packing, Render, Spend, check_budget
from ..core.types import Context
from ..core.vocabulary import Importance, Role

MAX_CONTENT_BYTES = 64 * 1024  # one message's text
MAX_TOOL_RESULT_BYTES = 8 << 20  # a tool's result (a file read, a log) through a proxy; the body limit bounds it too
MAX_PARTS = 64  # content parts of one message (AFMConfig.max_attachments bounds the images and files)
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


class PackChoices(BaseModel):
    """What a caller may choose per call at every door (``server.packing.PackOptions``): left out, the server's
    configuration decides. A new per-call option is a field here and in ``PackOptions``."""

    model_config = ConfigDict(extra="forbid")
    render: Render | None = Field(None, description="chat: the packed history; structured: one memory message.")
    packing: Packing | None = Field(None, description="afm: constraints reserved first; paper: greedy.")
    fill: Fill | None = Field(None, description="After the constraints: best score first, or chronological.")
    spend: Spend | None = Field(None, description="budget: spare tokens upgrade messages; intended: stop there.")
    overflow: Overflow | None = Field(None, description="degrade: lower the constraints that do not fit; raise: 422.")


class ContextOptions(PackChoices):
    query: str = Field(max_length=MAX_CONTENT_BYTES)
    budget_tokens: Budget
    system_preamble: str | None = Field(None, max_length=MAX_CONTENT_BYTES)

    @field_validator("query", "system_preamble")
    @classmethod
    def _text_bytes(cls, value: str | None) -> str | None:
        return _check_bytes(value)


class StatelessContextRequest(ContextOptions):
    messages: list[MessageIn] = Field(max_length=MAX_MESSAGES)


class SessionCreated(BaseModel):
    id: str
    created: float


class AFMOptions(PackChoices):
    """The ``afm`` extension field of a proxied request (the budget: the server's ``--budget`` when left out)."""

    budget_tokens: Budget | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal[Role, "developer"]  # developer: OpenAI's newer name for system
    content: str | list[dict[str, Any]] | None = None

    @field_validator("content")
    @classmethod
    def _parts_count(cls, value: str | list[dict[str, Any]] | None) -> str | list[dict[str, Any]] | None:
        if isinstance(value, list) and len(value) > MAX_PARTS:  # the text's size: formats.split.checked
            raise ValueError(f"a message has at most {MAX_PARTS} content parts")
        return value


class ChatCompletionRequest(BaseModel):
    """OpenAI's request; fields other than ``messages`` and ``afm`` are forwarded unchanged. The numbers and
    flags this model names are strict, here and in the other two proxies' requests: JSON's ``true`` is not a
    temperature, nor ``1`` a stream flag (the schema says so, and the upstream would refuse them)."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, max_length=256)
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = Field(False, strict=True)
    max_tokens: int | None = Field(None, ge=1, le=131072, strict=True)
    temperature: float | None = Field(None, ge=0, le=2, strict=True)
    afm: AFMOptions | None = None


class ResponsesRequest(BaseModel):
    """OpenAI's Responses request; fields other than ``input``, ``instructions`` and ``afm`` are forwarded."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, max_length=256)
    input: str | list[dict[str, Any]] = Field(max_length=MAX_MESSAGES)
    instructions: str | None = Field(None, max_length=MAX_CONTENT_BYTES)
    stream: bool = Field(False, strict=True)
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
    max_tokens: int = Field(ge=1, strict=True, description="Required by the Messages API.")
    system: str | list[dict[str, Any]] | None = None
    stream: bool = Field(False, strict=True)
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


class AttachmentOut(BaseModel):
    """An image or file of a message as a client reads it (``core.parts.Attached.summary``): never its bytes."""

    sha256: str = Field(description="Of the bytes (of the URL for an http(s) image, which is never fetched).")
    kind: str
    mime: str
    name: str
    url: str | None
    detail: str
    width: int | None
    height: int | None
    pages: int | None
    text_chars: int
    thumbnail: str | None = Field(description="A JPEG data: URL, at most 256 px a side, without metadata.")
    tokens_full: int
    tokens_thumbnail: int


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
    attachments: list[AttachmentOut]
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
    """Everything a tenant stored (access under data-protection law): its sessions and their messages, with
    their attachments' metadata (not their bytes)."""

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
