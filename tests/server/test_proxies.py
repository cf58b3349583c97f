"""The three proxy formats end to end: the real ``openai`` and ``anthropic`` client libraries talk to a real
``afm-local serve``, which packs an agent history (parallel tool calls, long tool results, a constraint)
and forwards it to an upstream of the same format that checks every request against that API's rules.

Done when: at 300 to 4,000 tokens, all three formats, streaming and not, 0 requests rejected, and the
constraint reaches the upstream verbatim every time.
"""

from __future__ import annotations

import base64
import json

import anthropic
import httpx
import openai
import pytest

from tests.support.agent_loop import as_anthropic, as_responses
from tests.support.media import data
from tests.support.servers import create_key, proxy_server

KEY = "proxy-test-key"
CONSTRAINT = (
    "Before anything else: I have a severe peanut allergy. Even traces can send me to hospital, so "
    "never suggest a dish, snack or sauce that contains peanuts."
)
QUERY = "Which street food should I try in Bangkok tonight?"
BUDGETS = (300, 500, 1000, 2000, 4000)
HOTELS = "\n".join(
    json.dumps(
        {
            "hotel": f"Riverside {i}",
            "price_thb": 1800 + 37 * i,
            "rating": 4.1 + i % 8 / 10,
            "area": "Riverside" if i % 2 else "Sukhumvit",
        }
    )
    for i in range(70)
)
FORECAST = " ".join(["Hot and humid with afternoon thunderstorms over the city, highs near 34C."] * 12)


def chat_history() -> list[dict]:
    """The agent history in OpenAI chat's shape: a constraint, two tool steps (one with parallel calls)."""

    def call(i: str, name: str, args: dict) -> dict:
        return {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}

    return [
        {"role": "system", "content": "You are a careful travel agent."},
        {"role": "user", "content": "Hi! I'm planning two weeks in Thailand in March."},
        {"role": "user", "content": CONSTRAINT},
        {
            "role": "assistant",
            "content": "Noted. Let me look at hotels and the weather.",
            "tool_calls": [call("c1", "search_hotels", {"city": "Bangkok"}), call("c2", "get_forecast", {"month": 3})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": HOTELS},
        {"role": "tool", "tool_call_id": "c2", "content": FORECAST},
        {"role": "assistant", "content": "There are many riverside hotels from 1,800 baht; March is hot."},
        {"role": "user", "content": "Book the cheapest riverside one, please."},
        {"role": "assistant", "content": "", "tool_calls": [call("c3", "book_hotel", {"hotel": "Riverside 1"})]},
        {"role": "tool", "tool_call_id": "c3", "content": "Booked Riverside 1, confirmation RV-2201."},
        {"role": "assistant", "content": "Done: Riverside 1 is booked (confirmation RV-2201)."},
        {"role": "user", "content": QUERY},
    ]


@pytest.fixture(scope="module")
def afm(spawn_module_server, upstream, tmp_path_factory):
    db = tmp_path_factory.mktemp("proxies") / "afm.db"
    return proxy_server(spawn_module_server, upstream.url, db, KEY, "proxies")


def _sent(recorded) -> str:
    return json.dumps(recorded.body, ensure_ascii=False)


def test_three_formats_at_every_budget_are_accepted_and_keep_the_constraint(afm, upstream):
    chat = openai.OpenAI(base_url=afm.url + "/v1", api_key=KEY, max_retries=0)
    claude = anthropic.Anthropic(base_url=afm.url, auth_token=KEY, api_key=None, max_retries=0)
    history = chat_history()
    instructions, items = as_responses(history)
    system, messages = as_anthropic(history)
    start = len(upstream.requests)
    for budget in BUDGETS:
        extra = {"afm": {"budget_tokens": budget}}
        stream = budget in (500, 2000)
        reply = chat.chat.completions.create(model="m", messages=history, extra_body=extra, stream=stream)
        text = "".join(c.choices[0].delta.content or "" for c in reply) if stream else reply.choices[0].message.content
        assert text.startswith("I was sent")
        answer = chat.responses.create(
            model="m", instructions=instructions, input=items, extra_body=extra, stream=stream
        )
        if stream:
            assert [e.type for e in answer][-1] == "response.completed"
        else:
            assert answer.output_text.startswith("I was sent")
        if stream:
            with claude.messages.stream(
                model="m", max_tokens=64, system=system, messages=messages, extra_body=extra
            ) as events:
                assert events.get_final_text().startswith("I was sent")
        else:
            said = claude.messages.create(model="m", max_tokens=64, system=system, messages=messages, extra_body=extra)
            assert said.content[0].text.startswith("I was sent")
    sent = upstream.requests[start:]
    assert len(sent) == 3 * len(BUDGETS)
    assert [r.violations for r in sent if r.violations] == []
    assert all(CONSTRAINT in _sent(r) for r in sent)
    chat_at = {b: sent[3 * i].body["messages"] for i, b in enumerate(BUDGETS)}
    names = [[c["function"]["name"] for m in chat_at[b] for c in m.get("tool_calls") or ()] for b in BUDGETS]
    assert "search_hotels" not in names[0]  # 300 tokens: the big step is one line naming its tools
    assert any("[Turn 3 · tools search_hotels, get_forecast" in (m["content"] or "") for m in chat_at[300])
    results = {b: [m["content"] for m in chat_at[b] if m["role"] == "tool"] for b in BUDGETS}
    assert "search_hotels" in names[3] and "[digest: " in results[2000][0]  # 2,000: compressed
    assert HOTELS in results[4000] and FORECAST in results[4000]  # 4,000: everything, whole


def test_an_agent_history_with_images_packs_at_every_budget_in_all_three_formats(afm, upstream):
    """Parallel tool calls, long tool results and a screenshot in one history: at 300 to 4,000 tokens each
    format's upstream accepts every request (calls paired with their results, images in its own shape), the
    constraint is verbatim, and the screenshot is sent as an image only when the budget holds it."""
    shot = base64.b64encode(data("png/pricing_en.png")).decode()
    history = chat_history()
    history.insert(
        3,
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here is the hotel's price list."},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + shot, "detail": "low"}},
            ],
        },
    )
    chat = openai.OpenAI(base_url=afm.url + "/v1", api_key=KEY, max_retries=0)
    claude = anthropic.Anthropic(base_url=afm.url, auth_token=KEY, api_key=None, max_retries=0)
    instructions, items = as_responses(history)
    system, messages = as_anthropic(history)
    start = len(upstream.requests)
    for budget in BUDGETS:
        extra = {"afm": {"budget_tokens": budget}}
        chat.chat.completions.create(model="m", messages=history, extra_body=extra)
        chat.responses.create(model="m", instructions=instructions, input=items, extra_body=extra)
        claude.messages.create(model="m", max_tokens=64, system=system, messages=messages, extra_body=extra)
    sent = upstream.requests[start:]
    assert [r.api for r in sent] == ["chat", "responses", "anthropic"] * len(BUDGETS)
    assert [r.violations for r in sent if r.violations] == []
    assert all(CONSTRAINT in _sent(r) for r in sent)
    bodies = {b: [_sent(r) for r in sent[3 * i : 3 * i + 3]] for i, b in enumerate(BUDGETS)}
    assert not any(shot in body for body in bodies[300])  # 300 tokens: the screenshot is a line at most
    assert all(shot in body for body in bodies[4000])  # 4,000: the screenshot itself, in each API's shape


def test_an_orphan_tool_result_in_the_request_is_a_clear_422_and_is_not_forwarded(afm, upstream):
    start = len(upstream.requests)
    bad = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "nope", "content": "18C"},
        {"role": "user", "content": QUERY},
    ]
    response = httpx.post(
        afm.url + "/v1/chat/completions",
        json={"model": "m", "messages": bad},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=60,
    )
    assert response.status_code == 422 and "answers no call" in response.json()["error"]["message"]
    response = httpx.post(
        afm.url + "/v1/responses",
        json={"model": "m", "input": "hi", "previous_response_id": "r"},
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=60,
    )
    assert response.status_code == 422 and "previous_response_id" in response.json()["error"]["message"]
    assert len(upstream.requests) == start


def test_the_current_tool_loop_after_the_query_is_packed_after_it_and_its_newest_result_sent_whole(afm, upstream):
    chat = openai.OpenAI(base_url=afm.url + "/v1", api_key=KEY, max_retries=0)
    loop = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "w1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "w1", "content": "31C, light rain"},
    ]
    reply = chat.chat.completions.create(
        model="m", messages=chat_history() + loop, extra_body={"afm": {"budget_tokens": 400}}
    )
    assert reply.choices[0].message.content == "The tool said: 31C, light rain"

    def given(messages):  # null fields are not passed on
        return [{k: v for k, v in m.items() if v is not None} for m in messages]

    forwarded = upstream.requests[-1].body["messages"]
    assert given(forwarded[-2:]) == given(loop) and not upstream.requests[-1].violations
    assert forwarded[-3] == {"role": "user", "content": chat_history()[-1]["content"]}  # the query, then the loop


def test_images_travel_through_all_three_formats_in_their_own_shapes(afm, upstream):
    """A screenshot in the history and one with the query, in each API's own image shape: packed (whole at a
    large budget, a thumbnail or a line at smaller ones), written back in that shape, valid for the API."""
    pricing, receipt = data("png/pricing_en.png"), data("png/receipt_en.png")
    b64 = {name: base64.b64encode(raw).decode() for name, raw in (("pricing", pricing), ("receipt", receipt))}
    chat_history = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "our pricing table"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + b64["pricing"], "detail": "high"},
                },
            ],
        },
        {"role": "assistant", "content": "The Team plan looks right for you."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Is this receipt right?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64["receipt"]}},
            ],
        },
    ]
    items = [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "our pricing table"},
                {"type": "input_image", "image_url": "data:image/png;base64," + b64["pricing"], "detail": "high"},
            ],
        },
        {"role": "assistant", "content": "The Team plan looks right for you."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Is this receipt right?"},
                {"type": "input_image", "image_url": "data:image/png;base64," + b64["receipt"]},
            ],
        },
    ]
    source = {name: {"type": "base64", "media_type": "image/png", "data": value} for name, value in b64.items()}
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "our pricing table"}, {"type": "image", "source": source["pricing"]}],
        },
        {"role": "assistant", "content": "The Team plan looks right for you."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Is this receipt right?"},
                {"type": "image", "source": source["receipt"]},
            ],
        },
    ]
    chat = openai.OpenAI(base_url=afm.url + "/v1", api_key=KEY, max_retries=0)
    claude = anthropic.Anthropic(base_url=afm.url, auth_token=KEY, api_key=None, max_retries=0)
    start = len(upstream.requests)
    for budget, stream in ((3000, False), (3000, True), (420, False)):  # the query's own image costs 255
        extra = {"afm": {"budget_tokens": budget}}
        reply = chat.chat.completions.create(model="m", messages=chat_history, extra_body=extra, stream=stream)
        assert stream or reply.choices[0].message.content.startswith("I was sent")
        list(reply) if stream else None
        answer = chat.responses.create(model="m", input=items, extra_body=extra, stream=stream)
        list(answer) if stream else None
        said = claude.messages.create(model="m", max_tokens=64, messages=messages, extra_body=extra, stream=stream)
        list(said) if stream else None
    sent = upstream.requests[start:]
    assert [r.api for r in sent[:3]] == ["chat", "responses", "anthropic"] and len(sent) == 9
    assert [r.violations for r in sent if r.violations] == []
    whole = [_sent(r) for r in sent[:6]]
    assert all(b64["pricing"] in body and b64["receipt"] in body for body in whole)  # 3,000 tokens: all of it
    assert sent[1].body["input"][0]["content"][1]["type"] == "input_image"
    assert sent[2].body["messages"][0]["content"][1] == {"type": "image", "source": source["pricing"]}
    small = [_sent(r) for r in sent[6:]]
    assert all(b64["pricing"] not in body and b64["receipt"] in body for body in small)  # the query's own stays
    response = httpx.post(
        afm.url + "/v1/messages",
        headers={"Authorization": f"Bearer {KEY}"},
        timeout=60,
        json={
            "model": "m",
            "max_tokens": 8,
            "messages": [
                {"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "f1"}}]},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "q"},
            ],
        },
    )
    assert response.status_code == 422 and "never fetched" in response.json()["error"]["message"]


def test_a_tenant_key_never_reaches_the_upstream_and_an_open_server_passes_the_clients_own(
    spawn_module_server, upstream, tmp_path_factory
):
    """Keys live in the store (no --api-key-env): the caller's afm key is ours, never forwarded. A server with
    no key at all passes the client's own upstream key on, in each API's header."""
    folder = tmp_path_factory.mktemp("proxy-keys")
    tenant_key = create_key(str(folder / "keyed.db"), "alice")
    keyed = spawn_module_server(
        "--db", str(folder / "keyed.db"), "--upstream", upstream.url, "--no-abstractive", name="proxies-keyed"
    )
    open_server = spawn_module_server(
        "--db", str(folder / "open.db"), "--upstream", upstream.url, "--no-abstractive", name="proxies-open"
    )
    bodies = {
        "/v1/chat/completions": {"model": "m", "messages": [{"role": "user", "content": QUERY}]},
        "/v1/responses": {"model": "m", "input": QUERY},
        "/v1/messages": {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": QUERY}]},
    }
    for server, key in ((keyed, tenant_key), (open_server, "client-upstream-key")):
        start = len(upstream.requests)
        for route, body in bodies.items():
            headers = {"Authorization": f"Bearer {key}"}
            if route == "/v1/messages" and server is open_server:
                headers = {"x-api-key": key}
            assert httpx.post(server.url + route, json=body, headers=headers, timeout=60).status_code == 200
        sent = upstream.requests[start:]
        assert [r.api for r in sent] == ["chat", "responses", "anthropic"]
        credentials = [(r.headers.get("authorization"), r.headers.get("x-api-key")) for r in sent]
        if server is keyed:
            assert credentials == [(None, None)] * 3
        else:
            assert credentials == [(f"Bearer {key}", None), (f"Bearer {key}", None), (None, key)]
