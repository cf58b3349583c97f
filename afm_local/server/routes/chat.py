"""``POST /v1/chat/completions``: OpenAI-compatible. The client's history is packed with AFM and sent to
``--upstream`` (streaming passed through), or answered by the built-in llama.cpp model when there is
no upstream. The only outbound connection the server ever opens is to ``--upstream``."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ...core.accounting import content_text
from ...core.types import Context
from ..answerer import BuiltinModel
from ..errors import APIError
from ..openai_compat import split_chat
from ..schemas import AFMOptions, ChatCompletionRequest
from ..state import AppState, pack_with_baseline
from . import app_state

log = logging.getLogger("afm_local.server")
router = APIRouter(tags=["openai"])
ROUTE = "/v1/chat/completions"
BUILTIN_PROMPT_SHARE = 0.75  # of the built-in model's window left after the reply: its tokenizer is not ours


@router.post(ROUTE)
async def chat_completions(
    body: ChatCompletionRequest, request: Request, state: AppState = Depends(app_state)
) -> Response:
    chat = split_chat(body.messages)
    options = body.afm or AFMOptions()
    budget = options.budget_tokens or state.settings.budget
    params = BuiltinModel.params(body) if state.builtin is not None else {}
    if state.builtin is not None:  # the built-in model's window: the prompt (other tokenizer) + the reply
        budget = min(budget, max(64, int((state.settings.n_ctx - params["max_tokens"]) * BUILTIN_PROMPT_SHARE)))

    def work() -> tuple[Context, int]:
        fm = state.manager(state.stateless_cache)
        fm.add_messages(chat.history)
        return pack_with_baseline(fm, chat.query, budget, chat.preamble, options.render, options.packing)

    ctx, original = await state.run(work)
    headers = state.count_context(ctx, original, ROUTE)
    packed = list(ctx.messages) + chat.trailing  # after the query: sent verbatim
    if not isinstance(chat.query_content, str):  # the query's own images and files go as the client sent them
        packed[len(ctx.messages) - 1] = {"role": "user", "content": chat.query_content}
    if state.builtin is not None:
        return await builtin_answer(state, packed, body, params, headers)
    return await forward(state, packed, body, request, headers)


async def forward(
    state: AppState,
    packed: list[dict[str, Any]],
    body: ChatCompletionRequest,
    request: Request,
    headers: dict[str, str],
) -> Response:
    """Send the packed request to the upstream; stream its answer back when the client streams."""
    assert state.http is not None and state.settings.upstream
    payload = body.model_dump(exclude_unset=True, exclude={"afm", "messages"})
    payload["messages"] = packed
    out_headers = {"content-type": "application/json", "accept": request.headers.get("accept", "*/*")}
    if state.settings.upstream_api_key:
        out_headers["authorization"] = f"Bearer {state.settings.upstream_api_key}"
    elif not state.settings.api_key and request.headers.get("authorization"):
        out_headers["authorization"] = request.headers["authorization"]  # the client's own upstream key
    upstream_request = state.http.build_request(
        "POST", state.settings.upstream + ROUTE, content=json.dumps(payload).encode(), headers=out_headers
    )
    try:
        response = await state.http.send(upstream_request, stream=True)
    except httpx.HTTPError as exc:
        log.warning("upstream unreachable: %s", type(exc).__name__)
        raise APIError(502, "upstream_error", f"the upstream could not be reached ({type(exc).__name__})") from None
    media_type = response.headers.get("content-type", "application/json")
    if not body.stream or "text/event-stream" not in media_type:
        try:
            content = await response.aread()
        except httpx.HTTPError as exc:
            raise APIError(502, "upstream_error", f"the upstream failed ({type(exc).__name__})") from None
        finally:
            await response.aclose()
        return Response(content, status_code=response.status_code, media_type=media_type, headers=headers)

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
        headers={**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def builtin_answer(
    state: AppState,
    packed: list[dict[str, Any]],
    body: ChatCompletionRequest,
    params: dict[str, Any],
    headers: dict[str, str],
) -> Response:
    """Answer with the built-in llama.cpp model on its own thread; streams as server-sent events."""
    builtin = state.builtin
    assert builtin is not None
    # The built-in model reads text only: the text of image messages (caption, OCR, names) stands for them.
    messages = [{"role": m["role"], "content": content_text(m.get("content") or "")} for m in packed]
    loop = asyncio.get_running_loop()
    if not body.stream:
        result = await loop.run_in_executor(builtin.executor, builtin.complete, messages, params)
        return JSONResponse(result, headers=headers)
    # Streaming: load (and fail) before the 200 goes out, then produce chunks on the llama thread.
    await loop.run_in_executor(builtin.executor, builtin.ensure_loaded)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    cancelled = threading.Event()

    def emit(item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    loop.run_in_executor(builtin.executor, builtin.stream, messages, params, emit, cancelled)

    async def events() -> AsyncIterator[bytes]:
        try:
            while True:
                item = await queue.get()
                if item is None:
                    yield b"data: [DONE]\n\n"
                    return
                yield b"data: " + json.dumps(item).encode() + b"\n\n"
        finally:
            cancelled.set()

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
