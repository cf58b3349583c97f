"""An upstream test server that speaks OpenAI chat completions, OpenAI Responses and Anthropic Messages on
127.0.0.1, checks every request it is sent against that API's rules (``api_rules``), rejects a violation
with a 400 as the real API would, and records every request with its verdict.

It answers as a scripted model, in each format's own shape, streaming included (so the real client
libraries parse the answers): when tools are offered and the last message is a question about the
weather, it calls ``get_weather``; after a tool result, it answers with that result; otherwise it
says how many messages it was sent. That is enough for a real agent loop of a few turns.

The fuzz tests send it whatever generated requests the proxies forward: a body its checks or replies cannot
read is a violation too (a 400, as the real API would answer), never a crash. ``with Upstream() as up:``
serves until the block ends.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.api_rules import anthropic_violations, chat_violations, responses_violations
from tests.support.servers import free_port


@dataclass
class Recorded:
    api: str  # "chat", "responses" or "anthropic"
    body: dict[str, Any]
    violations: list[str]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Reply:
    """What the scripted model says: text, or one call of ``get_weather``."""

    text: str = ""
    call: tuple[str, str, str] | None = None  # id, name, arguments


def script(last_role: str, last_text: str, tools: bool, tool_result: str | None) -> Reply:
    if tool_result is not None:
        return Reply(text=f"The tool said: {tool_result}")
    if tools and last_role == "user" and "weather" in last_text.lower():
        return Reply(call=(f"call_{uuid.uuid4().hex[:8]}", "get_weather", json.dumps({"city": "Paris"})))
    return Reply(text=f"I was sent the conversation ({last_text[:40]}).")


@dataclass
class Upstream:
    requests: list[Recorded] = field(default_factory=list)
    port: int = field(default_factory=free_port)
    _server: uvicorn.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rejected(self) -> list[Recorded]:
        return [r for r in self.requests if r.violations]

    def start(self) -> Upstream:
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._endpoint("chat", _chat_check, _chat_reply), methods=["POST"]),
                Route(
                    "/v1/responses",
                    self._endpoint("responses", responses_violations, _responses_reply),
                    methods=["POST"],
                ),
                Route(
                    "/v1/messages",
                    self._endpoint("anthropic", anthropic_violations, _anthropic_reply),
                    methods=["POST"],
                ),
            ]
        )
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        threading.Thread(target=self._server.run, daemon=True).start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the upstream test server did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True

    def __enter__(self) -> Upstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _endpoint(self, api: str, check: Callable[[dict], list[str]], reply: Callable[[dict], Response]):
        async def endpoint(request: Request) -> Response:
            body = await request.json()
            try:
                violations = check(body)
                answer = None if violations else reply(body)
            except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
                violations, answer = [f"malformed request ({type(exc).__name__}: {exc})"], None
            self.requests.append(Recorded(api, body, violations, dict(request.headers)))
            if answer is None:
                return JSONResponse(
                    {"error": {"type": "invalid_request_error", "message": "; ".join(violations)}}, status_code=400
                )
            return answer

        return endpoint


def _chat_check(body: dict) -> list[str]:
    return chat_violations(body.get("messages") or [])


def _sse(events: list[tuple[str | None, dict | str]]) -> StreamingResponse:
    def lines():
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            yield f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n"

    return StreamingResponse(lines(), media_type="text/event-stream")


def _chat_reply(body: dict) -> Response:
    messages = body["messages"]
    last = messages[-1]
    result = last["content"] if last["role"] == "tool" else None
    said = script(last["role"], str(last.get("content") or ""), bool(body.get("tools")), result)
    calls = (
        [{"id": said.call[0], "type": "function", "function": {"name": said.call[1], "arguments": said.call[2]}}]
        if said.call
        else None
    )
    message = {"role": "assistant", "content": said.text or None, **({"tool_calls": calls} if calls else {})}
    finish = "tool_calls" if calls else "stop"
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:8]}", "created": int(time.time()), "model": body.get("model", "m")}
    if not body.get("stream"):
        return JSONResponse(
            {
                **base,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": len(messages), "completion_tokens": 5, "total_tokens": len(messages) + 5},
            }
        )
    delta = {"role": "assistant", "content": said.text or None}
    if calls:
        delta["tool_calls"] = [{"index": 0, **calls[0]}]
    chunk = {**base, "object": "chat.completion.chunk"}
    return _sse(
        [
            (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
            (None, "[DONE]"),
        ]
    )


def _responses_reply(body: dict) -> Response:
    items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    last = items[-1]
    result = last.get("output") if last.get("type") == "function_call_output" else None
    said = script(last.get("role", "tool"), str(last.get("content") or ""), bool(body.get("tools")), result)
    if said.call:
        output = {
            "type": "function_call",
            "id": f"fc_{said.call[0]}",
            "call_id": said.call[0],
            "name": said.call[1],
            "arguments": said.call[2],
            "status": "completed",
        }
    else:
        output = {
            "type": "message",
            "id": f"msg_{uuid.uuid4().hex[:8]}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": said.text, "annotations": []}],
        }
    response = {
        "id": f"resp_{uuid.uuid4().hex[:8]}",
        "object": "response",
        "created_at": time.time(),
        "model": body.get("model", "m"),
        "status": "completed",
        "output": [output],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": len(items),
            "output_tokens": 5,
            "total_tokens": len(items) + 5,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    if not body.get("stream"):
        return JSONResponse(response)
    started = {**response, "status": "in_progress", "output": []}
    events: list[tuple[str | None, dict | str]] = [
        ("response.created", {"type": "response.created", "sequence_number": 0, "response": started})
    ]
    if not said.call:
        events.append(
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": 1,
                    "item_id": output["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": said.text,
                    "logprobs": [],
                },
            )
        )
    events.append(("response.completed", {"type": "response.completed", "sequence_number": 2, "response": response}))
    return _sse(events)


def _anthropic_reply(body: dict) -> Response:
    last = body["messages"][-1]
    blocks = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    texts = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    result = (results[0]["content"] if isinstance(results[0]["content"], str) else "tool output") if results else None
    said = script("user", texts, bool(body.get("tools")), result)
    content = (
        [{"type": "tool_use", "id": said.call[0], "name": said.call[1], "input": json.loads(said.call[2])}]
        if said.call
        else [{"type": "text", "text": said.text}]
    )
    stop = "tool_use" if said.call else "end_turn"
    message = {
        "id": f"msg_{uuid.uuid4().hex[:8]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": len(body["messages"]), "output_tokens": 5},
    }
    if not body.get("stream"):
        return JSONResponse(message)
    start = {**message, "content": [], "stop_reason": None}
    events: list[tuple[str | None, dict | str]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(content):
        empty = {**block, "text": ""} if block["type"] == "text" else {**block, "input": {}}
        delta = (
            {"type": "text_delta", "text": block["text"]}
            if block["type"] == "text"
            else {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        )
        events += [
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": empty}),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(events)
