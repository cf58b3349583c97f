"""The framework adapters in a real agent loop of a few turns: LangChain's ``create_agent`` with
``AFMMiddleware`` and LlamaIndex's ``FunctionAgent`` with ``AFMMemory``, each calling a real tool, with the
upstream test server as the LLM (through the libraries' own OpenAI wrappers). Every request the model
is sent must be valid, within the budget's reach, and carry the constraint verbatim."""

from __future__ import annotations

import base64
import json

import anyio
import pytest

from afm_local.integrations.langchain import AFMMiddleware
from afm_local.integrations.llamaindex import AFMMemory
from tests.support.media import data, image_part
from tests.support.upstream import Upstream

CONSTRAINT = "I have a severe peanut allergy: never suggest a dish with peanuts, not even a sauce."
CHATTER = [
    f"On day {i} we visit the temples, the floating market and the old river quarter by boat." for i in range(30)
]
QUESTIONS = [
    "What's the weather in Paris today?",
    "And what is the weather like for the picnic?",
    "Is the weather good for a walk?",
]
BUDGET = 400


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18C and sunny in {city}"


@pytest.fixture(scope="module")
def upstream():
    server = Upstream().start()
    yield server
    server.stop()


def _checked(upstream: Upstream, start: int) -> list[dict]:
    sent = [r for r in upstream.requests[start:] if r.api == "chat"]
    assert sent and [r.violations for r in sent if r.violations] == []
    for r in sent:
        text = json.dumps(r.body["messages"], ensure_ascii=False)
        assert CONSTRAINT in text
        assert sum(m["content"] in CHATTER for m in r.body["messages"] if isinstance(m.get("content"), str)) < 30
    return [r.body for r in sent]


def test_langchain_agent_loop_with_the_middleware(upstream):
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(base_url=upstream.url + "/v1", api_key="unused", model="m", max_retries=0)
    agent = create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are a travel agent.",
        middleware=[AFMMiddleware(max_tokens=BUDGET)],
    )
    messages: list = [{"role": "user", "content": CONSTRAINT}]
    messages += [{"role": "user" if i % 2 else "assistant", "content": c} for i, c in enumerate(CHATTER)]
    start = len(upstream.requests)
    for question in QUESTIONS:
        messages = agent.invoke({"messages": [*messages, {"role": "user", "content": question}]})["messages"]
        assert messages[-1].content == "The tool said: 18C and sunny in Paris"
        assert messages[-2].type == "tool"
    bodies = _checked(upstream, start)
    assert len(bodies) == 2 * len(QUESTIONS)  # each question: the call, then the answer from its result
    later = bodies[-1]["messages"]  # the last call sees earlier tool steps packed, its own loop verbatim
    assert later[0] == {"role": "system", "content": "You are a travel agent."}
    assert later[-1]["role"] == "tool" and later[-2]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_langchain_images_in_the_history_and_in_the_query_reach_the_model(upstream):
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(base_url=upstream.url + "/v1", api_key="unused", model="m", max_retries=0)
    agent = create_agent(model, tools=[get_weather], middleware=[AFMMiddleware(max_tokens=3000)])
    pricing, receipt = image_part("png/pricing_en.png", "high"), image_part("png/receipt_en.png", "low")
    messages = [
        {"role": "user", "content": CONSTRAINT},
        {"role": "user", "content": [{"type": "text", "text": "our pricing table"}, pricing]},
        {"role": "assistant", "content": "Thanks, the Team plan looks right."},
        {"role": "user", "content": [{"type": "text", "text": "What's the weather in Paris today?"}, receipt]},
    ]
    start = len(upstream.requests)
    assert agent.invoke({"messages": messages})["messages"][-1].content == "The tool said: 18C and sunny in Paris"
    first = _checked(upstream, start)[0]["messages"]
    assert first[-1]["content"][1]["image_url"]["url"] == receipt["image_url"]["url"]  # the query, as given
    assert first[1]["content"][1]["image_url"] == pricing["image_url"]  # the history's screenshot, whole


def test_llamaindex_agent_loop_with_the_memory(upstream):
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.llms import ChatMessage
    from llama_index.llms.openai_like import OpenAILike

    llm = OpenAILike(
        api_base=upstream.url + "/v1",
        api_key="unused",
        model="m",
        is_chat_model=True,
        is_function_calling_model=True,
        max_retries=0,
    )
    agent = FunctionAgent(tools=[get_weather], llm=llm, system_prompt="You are a travel agent.", streaming=False)
    memory = AFMMemory.from_defaults(max_tokens=BUDGET)
    memory.set(
        [ChatMessage(role="user", content=CONSTRAINT)]
        + [ChatMessage(role="user" if i % 2 else "assistant", content=c) for i, c in enumerate(CHATTER)]
    )
    start = len(upstream.requests)

    async def run() -> None:
        for question in QUESTIONS:
            answer = await agent.run(question, memory=memory)
            assert str(answer) == "The tool said: 18C and sunny in Paris"

    anyio.run(run)
    bodies = _checked(upstream, start)
    assert len(bodies) == 2 * len(QUESTIONS)
    kept = memory.get_all()
    assert len(kept) == 31 + 4 * len(QUESTIONS)  # every message kept: question, call, result, answer
    later = bodies[-2]["messages"]  # the third question: the earlier tool steps come as valid units
    assert sum(bool(m.get("tool_calls")) for m in later) >= 1 or any(
        "tool get_weather" in str(m.get("content")) for m in later
    )


def test_llamaindex_image_blocks_in_the_history_and_in_the_query_reach_the_model(upstream):
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.llms import ChatMessage, ImageBlock, TextBlock
    from llama_index.llms.openai_like import OpenAILike

    pricing, receipt = data("png/pricing_en.png"), data("png/receipt_en.png")
    memory = AFMMemory.from_defaults(max_tokens=3000)
    memory.set(
        [
            ChatMessage(role="user", content=CONSTRAINT),
            ChatMessage(role="user", blocks=[TextBlock(text="our pricing table"), ImageBlock(image=pricing)]),
            ChatMessage(role="assistant", content="Thanks, the Team plan looks right."),
        ]
    )
    query = ChatMessage(
        role="user",
        blocks=[TextBlock(text="What's the weather in Paris today?"), ImageBlock(image=receipt, detail="low")],
    )
    llm = OpenAILike(
        api_base=upstream.url + "/v1",
        api_key="unused",
        model="m",
        is_chat_model=True,
        is_function_calling_model=True,
        max_retries=0,
    )
    agent = FunctionAgent(tools=[get_weather], llm=llm, streaming=False)
    start = len(upstream.requests)
    answer = anyio.run(lambda: agent.run(user_msg=query, memory=memory))
    assert str(answer) == "The tool said: 18C and sunny in Paris"
    first = _checked(upstream, start)[0]["messages"]
    image_urls = [
        p["image_url"]["url"]
        for m in first
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    encoded = {name: base64.b64encode(raw).decode() for name, raw in (("pricing", pricing), ("receipt", receipt))}
    assert [encoded["pricing"] in url for url in image_urls] == [True, False]  # the history's screenshot, whole
    assert encoded["receipt"] in image_urls[1]  # and the query's own, as given
