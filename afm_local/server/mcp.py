"""The MCP server (the official ``mcp`` SDK, the ``mcp`` extra): AFM's sessions as tools an agent calls.

Tools: ``add_messages`` (to a session, made when none is named), ``get_context`` (the session packed for
a query into ``budget_tokens``), ``explain`` (every message's fate and the reason for it), ``list_sessions``
and ``forget_session`` (an erasure, as ``DELETE /v1/sessions/{id}``). They run the same ``AppState`` calls as
the HTTP routes, over stdio (``afm-local mcp``) or streamable HTTP at ``/mcp`` under ``afm-local serve``.

Tenants: every tool reaches the store only through the ``TenantStore`` that one function, ``scope_of(ctx)``,
gives it for the call it runs in. Over HTTP that is the tenant of the key the request was authenticated
with (``AuthMiddleware`` guards ``/mcp`` like every route, rate limit included), never anything a tool is
passed; over stdio, whoever runs the process owns the store file, and the tools act as the ``default``
tenant (``--api-key-env``'s). Another tenant's session is an unknown one, with the same one-line error as
a missing one. Errors come back as tool errors with the routes' one-line messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from .._version import __version__
from ..core.errors import AFMError, UnknownSession
from ..local import local_components
from .packing import PackOptions, pack_session
from .schemas import MAX_BUDGET, MAX_CONTENT_BYTES, MessageIn, PackChoices
from .settings import ServerSettings
from .state import AppState
from .store import DEFAULT_TENANT, TenantStore

T = TypeVar("T")
MAX_MESSAGES_PER_CALL = 1000
INSTRUCTIONS = (
    "Adaptive Focus Memory, on this machine: add a conversation's messages to a session, then ask for the "
    "context of a query within a token budget. Binding constraints (allergies, limits, deadlines) are kept "
    "verbatim; the rest is sent whole, compressed or as one line, by relevance. explain says why."
)
Budget = Annotated[int, Field(ge=1, le=MAX_BUDGET, description="Tokens for everything sent.")]

# POST /mcp in the OpenAPI schema: a JSON-RPC 2.0 message in, the SDK's answers out. The SDK reads any
# ``id`` and ``params`` (a wrong one is a JSON-RPC error in a 200), so the schema does not narrow them.
_JSONRPC_ERROR = {
    "type": "object",
    "required": ["jsonrpc", "error"],
    "properties": {"jsonrpc": {"const": "2.0"}, "id": {}, "error": {"type": "object"}},
}
_OUR_ERROR = {"$ref": "#/components/schemas/ErrorBody"}
OPENAPI_PATH_ITEM: dict[str, Any] = {
    "post": {
        "tags": ["mcp"],
        "summary": "MCP over streamable HTTP (stateless): the memory tools, for the caller's tenant",
        "operationId": "mcp",
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["jsonrpc"],
                        "properties": {
                            "jsonrpc": {"const": "2.0"},
                            "method": {"type": "string"},
                            "id": {},
                            "params": {},
                        },
                    }
                }
            },
        },
        "responses": {
            "200": {
                "description": "The JSON-RPC answer (a result, or an error such as an unknown tool or session).",
                "content": {"text/event-stream": {}},
            },
            "202": {"description": "A notification or response, accepted."},
            "400": {
                "description": "Not a JSON-RPC message, or not UTF-8 / JSON.",
                "content": {"application/json": {"schema": {"anyOf": [_JSONRPC_ERROR, _OUR_ERROR]}}},
            },
            "401": {
                "description": "Missing or wrong API key.",
                "content": {"application/json": {"schema": _OUR_ERROR}},
            },
            "406": {
                "description": "The client does not accept both application/json and text/event-stream.",
                "content": {"application/json": {"schema": _JSONRPC_ERROR}},
            },
            "413": {"description": "The body is too large.", "content": {"application/json": {"schema": _OUR_ERROR}}},
            "429": {
                "description": "This key's rate limit is exceeded.",
                "content": {"application/json": {"schema": _OUR_ERROR}},
            },
        },
    }
}


@dataclass(frozen=True, slots=True)
class Scope:
    """What a tool call works on: the app's state, and the store as the caller's tenant sees it."""

    state: AppState
    store: TenantStore


ScopeOf = Callable[[Context], Scope]


def mcp_server(scope_of: ScopeOf) -> MCPServer:
    """An MCP server whose tools work on the ``Scope`` that ``scope_of`` returns for the call a tool runs
    in: the one place where the caller's identity decides which sessions a tool sees."""
    server: MCPServer = MCPServer("afm-local", instructions=INSTRUCTIONS, version=__version__)

    @server.tool()
    async def add_messages(
        messages: Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_MESSAGES_PER_CALL)],
        ctx: Context,
        session: str | None = None,
    ) -> dict[str, Any]:
        """Add messages (role, content, optional importance) to a session, in order; a new session when
        none is named. All of them are stored, or none (the error says why). Returns the session id and each
        stored message's importance and tokens."""
        scope = scope_of(ctx)
        state, store = scope.state, scope.store
        created = session is None
        if session is None:
            session = (await _answer(state.run(store.create_session)))["id"]
        try:
            added = await _answer(state.sessions.append(store, session, [m.model_dump() for m in messages]))
        except ToolError:
            if created:  # nothing of a failed call stays behind, not even the session it made
                await _answer(state.sessions.erase(store, session))
            raise
        fields = ("id", "seq", "role", "importance", "tokens_full")
        return {"session": session, "added": [out.model_dump(mode="json", include=set(fields)) for out in added]}

    @server.tool()
    async def get_context(
        ctx: Context, session: str, query: str, budget_tokens: Budget, options: PackChoices | None = None
    ) -> dict[str, Any]:
        """The session's history packed for ``query`` into ``budget_tokens``: the messages to send an LLM.
        ``options`` (render, packing, fill, spend, overflow) override the server's configuration."""
        out = await _packed(scope_of(ctx), session, query, PackOptions.of(options, budget_tokens))
        return {k: out[k] for k in ("messages", "tokens_used", "budget_tokens", "fidelity_counts")}

    @server.tool()
    async def explain(
        ctx: Context, session: str, query: str, budget_tokens: Budget, options: PackChoices | None = None
    ) -> dict[str, Any]:
        """Why each message of the session takes the form it does for ``query`` at ``budget_tokens``: its
        importance, score, intended and actual fidelity, tokens and reason."""
        out = await _packed(scope_of(ctx), session, query, PackOptions.of(options, budget_tokens))
        return {k: out[k] for k in ("items", "tokens_used", "budget_tokens", "fidelity_counts")}

    @server.tool()
    async def list_sessions(ctx: Context, limit: Annotated[int, Field(ge=1, le=1000)] = 100) -> dict[str, Any]:
        """The stored sessions, newest first."""
        scope = scope_of(ctx)
        return {"sessions": await _answer(scope.state.run(scope.store.list_sessions, limit))}

    @server.tool()
    async def forget_session(ctx: Context, session: str) -> dict[str, Any]:
        """Erase a session: every message it holds and everything derived from them."""
        scope = scope_of(ctx)
        await _answer(scope.state.sessions.erase(scope.store, session))
        return {"session": session, "deleted": True}

    return server


async def _packed(scope: Scope, session_id: str, query: str, opts: PackOptions) -> dict[str, Any]:
    if len(query.encode("utf-8", "surrogatepass")) > MAX_CONTENT_BYTES:
        raise ToolError(f"the query is longer than {MAX_CONTENT_BYTES} bytes")
    ctx, _ = await _answer(pack_session(scope.state, scope.store, session_id, query, None, opts))
    return ctx.to_dict()


async def _answer(work: Awaitable[T]) -> T:
    """``work``'s result; an ``AFMError`` becomes a tool error with its one-line message."""
    try:
        return await work
    except UnknownSession:
        raise ToolError("unknown session") from None
    except AFMError as exc:
        raise ToolError(str(exc).splitlines()[0]) from None


def http_scope(state: AppState) -> ScopeOf:
    """Over streamable HTTP: the tenant of the key ``AuthMiddleware`` verified for the request the call
    came in (the principal it put into the request's scope), as for every route."""

    def scope_of(ctx: Context) -> Scope:
        request = ctx.request_context.request
        principal = request.scope.get("state", {}).get("principal") if request is not None else None
        if principal is None:  # AuthMiddleware guards /mcp: a call without a principal never came through it
            raise ToolError("missing or wrong API key (Authorization: Bearer <key>)")
        return Scope(state, state.tenant(principal.tenant))

    return scope_of


def run_stdio(settings: ServerSettings) -> None:
    """``afm-local mcp``: the tools over stdin and stdout, as the ``default`` tenant, on the store
    ``settings.db`` names (the one ``afm-local serve`` uses, so both see the default tenant's sessions)."""
    state = AppState(settings)
    state.components = local_components(settings.config, threads=settings.threads, abstractive=False)
    scope = Scope(state, state.tenant(DEFAULT_TENANT))
    try:
        anyio.run(mcp_server(lambda ctx: scope).run_stdio_async)
    finally:
        state.store.close()
