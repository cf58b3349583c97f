"""``POST /v1/chat/completions``: OpenAI-compatible. The client's history is packed with AFM and sent to
``--upstream`` (``server.proxy``; streaming passed through), or answered by the built-in llama.cpp model
when there is no upstream."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ..answerer import BuiltinModel
from ..formats.openai_chat import split_chat
from ..proxy import PROXY_RESPONSES, forward, pack, upstream_headers, upstream_url
from ..schemas import ERROR_RESPONSES, AFMOptions, ChatCompletionRequest
from ..state import AppState
from . import app_state, principal

router = APIRouter(tags=["openai"], responses={**ERROR_RESPONSES, **PROXY_RESPONSES})
ROUTE = "/v1/chat/completions"
BUILTIN_PROMPT_SHARE = 0.75  # of the built-in model's window left after the reply: its tokenizer is not ours


@router.post(ROUTE)
async def chat_completions(body: ChatCompletionRequest, request: Request) -> Response:
    state, caller = app_state(request), principal(request)  # as the proxies of routes.formats
    split = split_chat(body.messages)
    options = body.afm or AFMOptions()
    budget = options.budget_tokens or state.settings.budget
    params = BuiltinModel.params(body) if state.builtin is not None else {}
    if state.builtin is not None:  # the built-in model's window: the prompt (other tokenizer) + the reply
        budget = min(budget, max(64, int((state.settings.n_ctx - params["max_tokens"]) * BUILTIN_PROMPT_SHARE)))
    ctx, original = await pack(state, caller.tenant, split, options, budget)
    headers = state.count_context(ctx, original, ROUTE)
    packed = list(ctx.messages) + split.trailing  # after the query: sent verbatim
    if state.builtin is not None:
        return await builtin_answer(state, packed, body, params, headers)
    payload = body.model_dump(exclude_unset=True, exclude={"afm", "messages"})
    payload["messages"] = packed
    out_headers = upstream_headers(state, request, "openai", caller)
    return await forward(state, upstream_url(state, ROUTE), payload, out_headers, body.stream, headers)


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
    messages = [{"role": m["role"], "content": m.get("content") or ""} for m in packed]
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
