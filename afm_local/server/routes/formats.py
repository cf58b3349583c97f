"""``POST /v1/responses`` (OpenAI Responses) and ``POST /v1/messages`` (Anthropic Messages): the client's
history is packed with AFM and forwarded to an upstream of the same format (``server.proxy``;
streaming passed through). There is no built-in answer in these formats: without an upstream, 503."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..formats.anthropic import messages_body, split_messages
from ..formats.responses import responses_body, split_responses
from ..formats.split import Split
from ..proxy import PROXY_RESPONSES, Auth, forward, pack, upstream_headers, upstream_url
from ..schemas import ERROR_RESPONSES, AFMOptions, MessagesRequest, ResponsesRequest
from . import app_state, principal

router = APIRouter(tags=["proxies"], responses={**ERROR_RESPONSES, **PROXY_RESPONSES})
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"
Writer = Callable[[dict[str, Any], list[dict[str, Any]], Split], dict[str, Any]]


@router.post(RESPONSES)
async def responses(body: ResponsesRequest, request: Request) -> Response:
    raw = body.model_dump(exclude_unset=True)
    return await _proxy(request, raw, split_responses(raw), body.afm, RESPONSES, responses_body, "openai")


@router.post(MESSAGES)
async def messages(body: MessagesRequest, request: Request) -> Response:
    raw = body.model_dump(exclude_unset=True)
    return await _proxy(request, raw, split_messages(raw), body.afm, MESSAGES, messages_body, "anthropic")


async def _proxy(
    request: Request,
    raw: dict[str, Any],
    split: Split,
    options: AFMOptions | None,
    route: str,
    write: Writer,
    auth: Auth,
) -> Response:
    """Pack in the caller's tenant's cache, forward, pass the answer back (the app and the caller come from
    the request, as the routes' dependencies read them)."""
    state, caller = app_state(request), principal(request)
    url = upstream_url(state, route)  # 503 before any packing when there is nowhere to send it
    options = options or AFMOptions()
    ctx, original = await pack(state, caller.tenant, split, options, options.budget_tokens or state.settings.budget)
    headers = state.count_context(ctx, original, route)
    payload = write(raw, list(ctx.messages), split)
    out_headers = upstream_headers(state, request, auth, caller)
    return await forward(state, url, payload, out_headers, bool(raw.get("stream")), headers)
