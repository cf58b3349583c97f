"""Invalid histories are refused in each API's own error shape, never forwarded to fail upstream and never
silently rewritten; what afm does not pack passes through (Anthropic's ``cache_control`` on the system
blocks, OpenAI's ``developer`` role). The real SDKs read the errors as they read their provider's."""

from __future__ import annotations

import base64

import anthropic
import httpx
import openai
import pytest

from tests.support.media import data
from tests.support.servers import proxy_server

KEY = "proxy-errors-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}
CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}


@pytest.fixture(scope="module")
def afm(spawn_module_server, upstream, tmp_path_factory):
    db = tmp_path_factory.mktemp("proxy-errors") / "afm.db"
    return proxy_server(spawn_module_server, upstream.url, db, KEY, "proxy-errors")


def _openai_error(response: httpx.Response) -> dict:
    assert response.status_code == 422, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) >= {"message", "type", "param", "code"}
    assert body["error"]["type"] == "invalid_request_error"
    return body["error"]


def test_openai_routes_refuse_invalid_histories_in_openais_shape(afm, upstream):
    start = len(upstream.requests)
    post = lambda route, body: httpx.post(afm.url + route, json=body, headers=HEADERS, timeout=60)  # noqa: E731
    no_id = post(
        "/v1/chat/completions",
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "content": "18C"},
                {"role": "user", "content": "q"},
            ],
        },
    )
    error = _openai_error(no_id)
    assert error["param"] == "messages[1].tool_call_id" and "tool_call_id" in error["message"]
    unanswered = post(
        "/v1/chat/completions",
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": "Let me check.", "tool_calls": [CALL]},
                {"role": "user", "content": "q"},
            ],
        },
    )
    assert "'c1' has no tool result before the query" in _openai_error(unanswered)["message"]
    broken = base64.b64encode(data("png/receipt_en.png")[:300]).decode()  # a truncated PNG with the query
    truncated = post(
        "/v1/chat/completions",
        {
            "model": "m",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Is this right?"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + broken}},
                    ],
                }
            ],
        },
    )
    assert truncated.status_code in (415, 422) and truncated.json()["error"]["code"] in (
        "unsupported_media_type",
        "invalid_request",
    )
    no_call_id = post(
        "/v1/responses",
        {"model": "m", "input": [{"role": "user", "content": "q"}, {"type": "function_call_output", "output": "x"}]},
    )
    assert _openai_error(no_call_id)["param"] == "input[1]"
    chat = openai.OpenAI(base_url=afm.url + "/v1", api_key=KEY, max_retries=0)
    with pytest.raises(openai.UnprocessableEntityError) as refused:  # the SDK reads it as its own
        chat.chat.completions.create(
            model="m",
            messages=[
                {"role": "user", "content": "hi"},
                {"role": "tool", "content": "18C"},
                {"role": "user", "content": "q"},
            ],
        )
    assert refused.value.body["param"] == "messages[1].tool_call_id" and refused.value.code == "invalid_request"
    assert len(upstream.requests) == start  # nothing was forwarded


def test_the_anthropic_route_refuses_in_anthropics_shape_and_keeps_cache_control(afm, upstream):
    start = len(upstream.requests)
    orphan = httpx.post(
        afm.url + "/v1/messages",
        headers=HEADERS,
        timeout=60,
        json={
            "model": "claude-sonnet-4-5",
            "max_tokens": 8,
            "messages": [
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "18C"}]},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "q"},
            ],
        },
    )
    assert orphan.status_code == 422
    body = orphan.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "answers no call" in body["error"]["message"]
    claude = anthropic.Anthropic(base_url=afm.url, auth_token=KEY, api_key=None, max_retries=0)
    with pytest.raises(anthropic.UnprocessableEntityError) as refused:
        claude.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=8,
            messages=[
                {"role": "user", "content": [{"type": "tool_result", "content": "18C"}, {"type": "text", "text": "q"}]}
            ],
        )
    assert "tool_use_id" in refused.value.body["error"]["message"]
    unauthorized = httpx.post(afm.url + "/v1/messages", json={}, headers={"Authorization": "Bearer wrong"})
    assert unauthorized.status_code == 401 and unauthorized.json()["type"] == "error"
    assert len(upstream.requests) == start
    system = [{"type": "text", "text": "You are a careful agent.", "cache_control": {"type": "ephemeral"}}]
    said = claude.messages.create(
        model="claude-sonnet-4-5", max_tokens=8, system=system, messages=[{"role": "user", "content": "q"}]
    )
    assert said.content[0].text.startswith("I was sent")
    assert upstream.requests[-1].body["system"] == system


def test_a_developer_preamble_keeps_its_role(afm, upstream):
    chat = openai.OpenAI(base_url=afm.url + "/v1", api_key=KEY, max_retries=0)
    chat.chat.completions.create(
        model="o3", messages=[{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "q"}]
    )
    assert upstream.requests[-1].body["messages"][0] == {"role": "developer", "content": "Be brief."}
