"""Issue 35's promise, end to end: an agent's request (one instruction with a hard constraint, then 30 tool
calls, one of them a 110 KB log) through each proxy with the real client libraries, plain and streaming, at
1,000 / 2,000 / 4,000 tokens: accepted, valid for a strict upstream, within the budget by that API's own
count (``tests.support.agent_loop``, written apart from the engine's accounting), the instruction verbatim
and the newest result whole. The LangChain and LlamaIndex adapters are held to the same count."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from tests.support.agent_loop import (
    INSTRUCTION,
    agent_chat,
    anthropic_count,
    as_anthropic,
    as_responses,
    chat_count,
    module_text,
    responses_count,
)
from tests.support.servers import proxy_server

KEY = "agent-loop-key"
BUDGETS = (1000, 2000, 4000)
SLACK = 1.01  # the done-when: at most 1% over the budget by the API's own count
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module")
def afm(spawn_module_server, upstream, tmp_path_factory):
    db = tmp_path_factory.mktemp("agent-loop") / "afm.db"
    return proxy_server(spawn_module_server, upstream.url, db, KEY, "agent-loop")


def test_a_30_step_loop_with_a_110_kb_result_holds_the_budget_in_every_format(afm, upstream):
    history = agent_chat()
    assert chat_count(history) > 30_000  # what would reach the upstream unpacked
    instructions, items = as_responses(history)
    system, messages = as_anthropic(history)
    chat = openai.OpenAI(base_url=afm.url + "/v1", api_key=KEY, max_retries=0, timeout=600)
    claude = anthropic.Anthropic(base_url=afm.url, auth_token=KEY, api_key=None, max_retries=0, timeout=600)
    start = len(upstream.requests)
    for budget in BUDGETS:
        for stream in (False, True):
            extra = {"afm": {"budget_tokens": budget}}
            reply = chat.chat.completions.create(
                model="gpt-4o", messages=history, tools=TOOLS, extra_body=extra, stream=stream
            )
            list(reply) if stream else None
            answer = chat.responses.create(
                model="gpt-4o", instructions=instructions, input=items, extra_body=extra, stream=stream
            )
            list(answer) if stream else None
            said = claude.messages.create(
                model="claude-sonnet-4-5",
                max_tokens=64,
                system=system,
                messages=messages,
                extra_body=extra,
                stream=stream,
            )
            list(said) if stream else None
    sent = upstream.requests[start:]
    assert len(sent) == 3 * 2 * len(BUDGETS) and [r.violations for r in sent if r.violations] == []
    newest = module_text(29)
    for k, r in enumerate(sent):
        budget = BUDGETS[k // 6]
        count = {
            "chat": lambda b: chat_count(b["messages"], b.get("tools")),
            "responses": responses_count,
            "anthropic": anthropic_count,
        }[r.api](r.body)
        assert count <= budget * SLACK, (r.api, budget, count)
        text = json.dumps(r.body, ensure_ascii=False)
        assert json.dumps(INSTRUCTION)[1:-1] in text, r.api  # the instruction and its constraint, verbatim
        assert json.dumps(newest)[1:-1] in text, (r.api, budget)  # the result the agent acts on next, whole
        assert "ERROR billing.worker job=4242" not in text or budget >= 2000  # the log is a digest at most


def test_the_adapters_hold_the_budget_on_an_agent_loop():
    from langchain.agents.middleware import ModelRequest
    from langchain_core.messages import SystemMessage, convert_to_messages, convert_to_openai_messages

    from afm_local.integrations.langchain import AFMMiddleware
    from afm_local.integrations.llamaindex import AFMMemory, message_of

    history = agent_chat()
    middleware = AFMMiddleware(max_tokens=2000)
    request = ModelRequest(
        model=None,
        messages=convert_to_messages(history[1:]),
        system_message=SystemMessage(content=history[0]["content"]),
    )
    for _ in range(2):  # the second call: the same loop, from the cache
        packed = middleware.packed(request)
        sent = convert_to_openai_messages([packed.system_message, *packed.messages])
        assert chat_count(sent) <= 2000 * SLACK and INSTRUCTION in json.dumps(sent)
    memory = AFMMemory.from_defaults(max_tokens=2000)
    memory.set([message_of(m) for m in history])
    got = memory.get()
    sent = [{"role": m.role.value, "content": m.content or ""} for m in got]
    assert sum(len(json.dumps(m)) for m in sent) < len(json.dumps(history)) / 10
    assert any(m.content == INSTRUCTION for m in got)
