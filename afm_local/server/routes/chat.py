"""``POST /v1/chat/completions``: OpenAI-compatible. The client's history is packed with AFM and sent to
``--upstream`` (``server.proxy``; streaming passed through), or answered by the built-in llama.cpp model
when there is no upstream."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ...core.accounting import content_text
from ..answerer import BuiltinModel
from ..formats.openai_chat import chat_body, split_chat
from ..formats.split import with_query_parts
from ..proxy import PROXY_RESPONSES, pack, pack_options, proxy
from ..schemas import ERROR_RESPONSES, ChatCompletionRequest
from ..state import AppState
from . import app_state, principal

router = APIRouter(tags=["openai"], responses={**ERROR_RESPONSES, **PROXY_RESPONSES})
ROUTE = "/v1/chat/completions"
BUILTIN_PROMPT_SHARE = 0.75  # of the built-in model's window left after the reply: its tokenizer is not ours


@router.post(ROUTE)
async def chat_completions(body: ChatCompletionRequest, request: Request) -> Response:
    state = app_state(request)
    split = split_chat(body.messages)
    raw = body.model_dump(exclude_unset=True, exclude={"messages"})
    raw["messages"] = [m.model_dump(exclude_none=True) for m in body.messages]
    if state.builtin is None:
        return await proxy(request, raw, split, body.afm, ROUTE, chat_body)
    # The built-in model's window: the prompt (another tokenizer) and the reply.
    params = BuiltinModel.params(body)
    opts = pack_options(state, raw, body.afm)
    window = max(64, int((state.settings.n_ctx - params["max_tokens"]) * BUILTIN_PROMPT_SHARE))
    ctx, headers = await pack(
        state, principal(request), split, replace(opts, budget_tokens=min(opts.budget_tokens, window)), ROUTE
    )
    packed = with_query_parts(list(ctx.messages), ctx.query_index, split)
    return await builtin_answer(state, packed, body, params, headers)


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
