"""What the three proxy routes share: pack a split request in the packing room (``server.packing``), and
forward the packed request to an upstream of its format (streaming passed through). The only outbound
connections the server ever opens are to the upstreams it was started with.

``UPSTREAM_API`` says which API each proxy route speaks: how its upstream takes a key, and the shape its
errors take (``server.errors.native_body``), so a client's own SDK reads them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from ..core.split import Split
from ..core.types import Context
from .auth import OPEN, Principal
from .errors import API, UPSTREAM_API, APIError
from .formats.split import with_query_parts
from .packing import PackOptions, pack_split, tools_tokens
from .schemas import AFMOptions, ErrorBody
from .state import AppState

log = logging.getLogger("afm_local.server")
ANTHROPIC_HEADERS = ("anthropic-version", "anthropic-beta")
PROXY_RESPONSES: dict[int | str, dict[str, Any]] = {  # the upstream's answer passes through, streams included
    200: {
        "description": "The upstream's answer in its own format (server-sent events when streaming); any other "
        "status the upstream gives passes through too.",
        "content": {"application/json": {"schema": {"type": "object"}}, "text/event-stream": {}},
    },
    502: {"model": ErrorBody, "description": "The upstream failed or is unreachable."},
}
Writer = Callable[[dict[str, Any], list[dict[str, Any]], Split], dict[str, Any]]  # a format's body writer


def pack_options(state: AppState, raw: dict[str, Any], options: AFMOptions | None) -> PackOptions:
    """A proxied request's choices: its ``afm`` field (the server's budget when it names none), its ``model``
    (which image rule counts) and its tool definitions (sent beside the messages, within the budget)."""
    beside = tools_tokens(state, raw.get("tools"))
    return PackOptions.of(options, state.settings.budget, model=raw.get("model"), beside_tokens=beside)


async def pack(
    state: AppState, caller: Principal, split: Split, opts: PackOptions, route: str
) -> tuple[Context, dict[str, str]]:
    """The packed context of a split request and its ``X-AFM-*`` headers (the metrics counted)."""
    ctx, original = await pack_split(state, caller.tenant, split, opts)
    return ctx, state.metrics.count_context(ctx, original, route)


async def proxy(
    request: Request, raw: dict[str, Any], split: Split, options: AFMOptions | None, route: str, write: Writer
) -> Response:
    """Pack in the caller's tenant's cache, write the packed context in the route's format, forward, pass the
    answer back (the app and the caller come from the request, as the routes' dependencies read them)."""
    state, caller = request.app.state.afm, request.scope["state"]["principal"]
    url = upstream_url(state, route)  # 503 before any packing when there is nowhere to send it
    ctx, headers = await pack(state, caller, split, pack_options(state, raw, options), route)
    payload = write(raw, with_query_parts(list(ctx.messages), ctx.query_index, split), split)
    out_headers = upstream_headers(state, request, UPSTREAM_API[route], caller)
    return await forward(state, url, payload, out_headers, bool(raw.get("stream")), headers)


def upstream_url(state: AppState, route: str) -> str:
    """The upstream a proxy route forwards to; 503 naming the flag when the server has none for it."""
    api = UPSTREAM_API[route]
    base = state.settings.upstream_for(api)
    if base is None:
        flag = "--anthropic-upstream or --upstream" if api == "anthropic" else "--upstream"
        raise APIError(
            503, "no_upstream", f"{route} forwards to an upstream of its format: start the server with {flag}"
        )
    return base + route


def upstream_headers(state: AppState, request: Request, auth: API, caller: Principal) -> dict[str, str]:
    """The forwarded request's headers: the server's upstream key, or else (only on an open server, where no
    key of ours is ever sent) the client's own upstream key; Anthropic's version headers pass through."""
    client_key = caller == OPEN
    headers = {"content-type": "application/json", "accept": request.headers.get("accept", "*/*")}
    key = state.settings.upstream_api_key
    if auth == "anthropic":
        headers.update({h: request.headers[h] for h in ANTHROPIC_HEADERS if h in request.headers})
        if key:
            headers["x-api-key"] = key
        elif client_key:
            headers.update({h: request.headers[h] for h in ("x-api-key", "authorization") if h in request.headers})
    elif key:
        headers["authorization"] = f"Bearer {key}"
    elif client_key and request.headers.get("authorization"):
        headers["authorization"] = request.headers["authorization"]
    return headers


async def forward(
    state: AppState, url: str, payload: dict[str, Any], headers: dict[str, str], stream: bool, afm: dict[str, str]
) -> Response:
    """Send the packed request to the upstream; stream its answer back when the client streams."""
    assert state.http is not None
    upstream_request = state.http.build_request("POST", url, content=json.dumps(payload).encode(), headers=headers)
    try:
        response = await state.http.send(upstream_request, stream=True)
    except httpx.HTTPError as exc:
        log.warning("upstream unreachable: %s", type(exc).__name__)
        raise APIError(502, "upstream_error", f"the upstream could not be reached ({type(exc).__name__})") from None
    media_type = response.headers.get("content-type", "application/json")
    if not stream or "text/event-stream" not in media_type:
        try:
            content = await response.aread()
        except httpx.HTTPError as exc:
            raise APIError(502, "upstream_error", f"the upstream failed ({type(exc).__name__})") from None
        finally:
            await response.aclose()
        return Response(content, status_code=response.status_code, media_type=media_type, headers=afm)

    async def passthrough() -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_raw():
                yield chunk
        except httpx.HTTPError as exc:
            log.warning("upstream stream broke: %s", type(exc).__name__)
        finally:
            await response.aclose()

    return StreamingResponse(
        passthrough(),
        status_code=response.status_code,
        media_type=media_type,
        headers={**afm, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
