"""``POST /v1/responses`` (OpenAI Responses) and ``POST /v1/messages`` (Anthropic Messages): the client's
history is packed with AFM and forwarded to an upstream of the same format (``server.proxy``;
streaming passed through). There is no built-in answer in these formats: without an upstream, 503."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..formats.anthropic import messages_body, split_messages
from ..formats.responses import responses_body, split_responses
from ..proxy import PROXY_RESPONSES, proxy
from ..schemas import ERROR_RESPONSES, MessagesRequest, ResponsesRequest

router = APIRouter(tags=["proxies"], responses={**ERROR_RESPONSES, **PROXY_RESPONSES})
RESPONSES = "/v1/responses"
MESSAGES = "/v1/messages"


@router.post(RESPONSES)
async def responses(body: ResponsesRequest, request: Request) -> Response:
    raw = body.model_dump(exclude_unset=True)
    return await proxy(request, raw, split_responses(raw), body.afm, RESPONSES, responses_body)


@router.post(MESSAGES)
async def messages(body: MessagesRequest, request: Request) -> Response:
    raw = body.model_dump(exclude_unset=True)
    return await proxy(request, raw, split_messages(raw), body.afm, MESSAGES, messages_body)
