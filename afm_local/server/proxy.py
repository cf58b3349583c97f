"""What the three proxy routes share: pack a split request, and forward the packed request to an upstream
of its format (streaming passed through). The only outbound connections the server ever opens are to
the upstreams it was started with."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Literal

import httpx
from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from ..core.types import Context
from .auth import OPEN, Principal
from .errors import APIError
from .formats.split import Split
from .schemas import AFMOptions, ErrorBody
from .state import AppState, pack_with_baseline

log = logging.getLogger("afm_local.server")
Auth = Literal["openai", "anthropic"]  # how an upstream takes its key: Authorization: Bearer, or x-api-key
ANTHROPIC_HEADERS = ("anthropic-version", "anthropic-beta")
PROXY_RESPONSES: dict[int | str, dict[str, Any]] = {  # the upstream's answer passes through, streams included
    200: {
        "description": "The upstream's answer in its own format (server-sent events when streaming); any other "
        "status the upstream gives passes through too.",
        "content": {"application/json": {"schema": {"type": "object"}}, "text/event-stream": {}},
    },
    502: {"model": ErrorBody, "description": "The upstream failed or is unreachable."},
}


async def pack(state: AppState, tenant: str, split: Split, options: AFMOptions, budget: int) -> tuple[Context, int]:
    """The packed context of a split request (a stateless manager over the tenant's own memory-only cache)
    and its baseline."""

    def work() -> tuple[Context, int]:
        fm = state.manager(state.stateless_cache(tenant))
        fm.add_messages(split.history)
        return pack_with_baseline(fm, split.query, budget, split.preamble, options.render, options.packing)

    return await state.run(work)


def upstream_url(state: AppState, route: str) -> str:
    """The upstream a proxy route forwards to; 503 naming the flag when the server has none for it."""
    base = state.settings.upstream_for(route)
    if base is None:
        flag = "--anthropic-upstream or --upstream" if route == "/v1/messages" else "--upstream"
        raise APIError(
            503, "no_upstream", f"{route} forwards to an upstream of its format: start the server with {flag}"
        )
    return base + route


def upstream_headers(state: AppState, request: Request, auth: Auth, caller: Principal) -> dict[str, str]:
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
