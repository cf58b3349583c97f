"""The Responses and Anthropic formats: split into the core's turns, and written back valid for their API."""

from __future__ import annotations

import base64

import pytest

from afm_local import FocusManager, InvalidInput, Turn
from afm_local.core.turns import ToolCall
from afm_local.server.formats.anthropic import OPENING, messages_body, split_messages
from afm_local.server.formats.responses import responses_body, split_responses
from afm_local.server.formats.split import with_query_parts
from tests.support.api_rules import anthropic_violations, responses_violations
from tests.support.fakes import fake_components

CALL = ToolCall("c1", "get_weather", '{"city": "Paris"}')
PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n tiny").decode()  # parts are only parsed here: bytes are read at ingest
PNG = f"data:image/png;base64,{PIXEL}"


def test_responses_items_become_turns_and_calls_join_the_assistant_turn_before_them():
    split = split_responses(
        {
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
                {"type": "function_call_output", "call_id": "c1", "output": "18C"},
                {"role": "user", "content": "And tomorrow?"},
                {"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": "{}"},
            ],
        }
    )
    assert split.preamble == "Be brief." and split.query == "And tomorrow?"
    assert split.history == (
        Turn("user", "Weather?"),
        Turn("assistant", "Checking.", tool_calls=(CALL,)),
        Turn("tool", "18C", tool_call_id="c1"),
    )
    assert split.loop == (Turn("assistant", "", tool_calls=(ToolCall("c2", "get_weather", "{}"),)),)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"input": "hi", "previous_response_id": "resp_1"}, "previous_response_id"),
        ({"input": [{"role": "assistant", "content": "x"}]}, "user message"),
        ({"input": [{"type": "web_search_call", "id": "w"}, {"role": "user", "content": "q"}]}, "cannot be packed"),
        ({"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file_1"}]}]}, "never fetched"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_audio"}, {"type": "input_text", "text": "q"}]}]},
            "input_audio",
        ),
        (
            {
                "input": [
                    {"type": "function_call", "call_id": "c1", "name": "f"},
                    {
                        "type": "function_call_output",
                        "call_id": "c1",
                        "output": [{"type": "input_image", "image_url": PNG}],
                    },
                    {"role": "user", "content": "q"},
                ]
            },
            "text only",
        ),
        (
            {
                "input": [
                    {"role": "assistant", "content": [{"type": "input_image", "image_url": PNG}]},
                    {"role": "user", "content": "q"},
                ]
            },
            "only a user message",
        ),
        ({"input": " "}, "user message with text"),  # found by the fuzz tests: the writer would forward "input": []
        ({"input": [{"role": "user", "content": "q"}, {"role": "user", "content": ""}]}, "says nothing"),
        ({"input": [{"role": "user", "content": "q"}, {"type": "function_call_output", "output": "x"}]}, "call_id"),
    ],
)
def test_responses_requests_that_cannot_be_packed_are_refused(body, error):
    with pytest.raises(InvalidInput, match=error):
        split_responses(body)


def test_anthropic_blocks_become_turns_and_results_with_the_query_stay_in_the_history():
    split = split_messages(
        {
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "..."},
                        {"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "c1", "content": "18C"},
                        {"type": "text", "text": "And tomorrow?"},
                    ],
                },
            ],
        }
    )
    assert split.preamble == "Be brief." and split.query == "And tomorrow?" and split.loop == ()
    assert split.history == (
        Turn("user", "Weather?"),
        Turn("assistant", "Checking.", tool_calls=(CALL,)),
        Turn("tool", "18C", tool_call_id="c1"),
    )


def test_images_and_documents_of_both_formats_become_parts_of_user_turns_and_the_query_keeps_its_own():
    responses = split_responses(
        {
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "the table"},
                        {"type": "input_image", "image_url": PNG, "detail": "high"},
                        {"type": "input_file", "file_data": PNG, "filename": "t.png"},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "and?"},
                        {"type": "input_image", "image_url": "https://x.org/q.png"},
                    ],
                },
            ]
        }
    )
    claude = split_messages(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "the table"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
                        {
                            "type": "document",
                            "source": {"type": "text", "media_type": "text/plain", "data": "Rules: no peanuts."},
                            "title": "r.txt",
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "and?"},
                        {"type": "image", "source": {"type": "url", "url": "https://x.org/q.png"}},
                    ],
                },
            ]
        }
    )
    first, claude_first = responses.history[0], claude.history[0]
    assert first.content == claude_first.content == "the table"
    assert [(a.part, a.detail, a.data) for a in first.attachments] == [
        ("image_url", "high", base64.b64decode(PIXEL)),
        ("file", "auto", base64.b64decode(PIXEL)),
    ]
    assert [(a.part, a.filename, a.data) for a in claude_first.attachments] == [
        ("image_url", "", base64.b64decode(PIXEL)),
        ("file", "r.txt", b"Rules: no peanuts."),
    ]
    url_part = {"type": "image_url", "image_url": {"url": "https://x.org/q.png", "detail": "auto"}}
    assert responses.query == claude.query == "and?" and responses.query_parts == claude.query_parts == (url_part,)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (
            {"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "f1"}}]},
            "never fetched",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "document", "source": {"type": "url", "url": "https://x.org/a.pdf"}}],
            },
            "base64 or text source",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}}],
            },
            "only a user message",
        ),
        ({"role": "user", "content": [{"type": "audio"}]}, "cannot be packed"),
    ],
)
def test_anthropic_blocks_that_cannot_be_packed_are_refused(message, error):
    with pytest.raises(InvalidInput, match=error):
        split_messages({"messages": [message, {"role": "user", "content": "q"}]})
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}}
    with pytest.raises(InvalidInput, match="tool_result carries text only"):
        split_messages(
            {
                "messages": [
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "shot", "input": {}}]},
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "c1", "content": [image]},
                            {"type": "text", "text": "q"},
                        ],
                    },
                ]
            }
        )


def test_image_parts_of_a_packed_context_and_of_the_query_are_written_back_in_each_format():
    thumb = {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/", "detail": "low"}}
    packed = [
        {"role": "user", "content": [{"type": "text", "text": "[image 1: t.png]"}, thumb]},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "and?"},
    ]
    url_part = {"type": "image_url", "image_url": {"url": "https://x.org/q.png", "detail": "auto"}}
    split = split_responses(
        {
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "and?"},
                        {"type": "input_image", "image_url": "https://x.org/q.png"},
                    ],
                }
            ]
        }
    )
    body = responses_body({"model": "m"}, with_query_parts(packed, len(packed) - 1, split), split)
    assert body["input"][0]["content"][1] == {
        "type": "input_image",
        "image_url": thumb["image_url"]["url"],
        "detail": "low",
    }
    assert body["input"][-1]["content"] == [
        {"type": "input_text", "text": "and?"},
        {"type": "input_image", "image_url": "https://x.org/q.png", "detail": "auto"},
    ]
    assert responses_violations(body) == []
    split = split_messages(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "and?"},
                        {"type": "image", "source": {"type": "url", "url": "https://x.org/q.png"}},
                    ],
                }
            ]
        }
    )
    assert split.query_parts == (url_part,)
    written = messages_body({"model": "m", "max_tokens": 8}, with_query_parts(packed, len(packed) - 1, split), split)
    assert written["messages"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"},
    }
    assert written["messages"][-1]["content"][1] == {
        "type": "image",
        "source": {"type": "url", "url": "https://x.org/q.png"},
    }
    assert anthropic_violations(written) == []


def test_anthropic_blank_text_is_no_query():
    """Found by the fuzz tests: an empty text block counted as the query, and the writer forwarded no message."""
    with pytest.raises(InvalidInput, match="user message with text"):
        split_messages({"messages": [{"role": "user", "content": ""}]})
    with pytest.raises(InvalidInput, match="says nothing"):  # the upstream refuses blank text
        split_messages(
            {
                "messages": [
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": "a"},
                    {"role": "user", "content": [{"type": "text", "text": "  "}]},
                ]
            }
        )


@pytest.mark.parametrize("budget", [40, 90, 400])
def test_packed_contexts_are_written_back_valid_for_both_apis(budget):
    fm = FocusManager(components=fake_components())
    fm.add_messages(
        [
            {"role": "assistant", "content": "Hello, where to?"},
            {"role": "user", "content": "Paris. What is the weather like there in spring?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "name": "get_weather", "arguments": "{}"},
                    {"id": "c2", "name": "get_time", "arguments": "{}"},
                ],
            },
            {"role": "tool", "content": "Mild, 14C, some showers in the afternoons of April.", "tool_call_id": "c1"},
            {"role": "tool", "content": "14:05", "tool_call_id": "c2"},
        ]
    )
    ctx = fm.build_context("Pack an umbrella?", budget, "Be brief.")
    loop = [
        {"type": "function_call", "call_id": "c9", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c9", "output": "ok"},
    ]
    body = responses_body({"model": "m", "afm": {}}, ctx.messages, split_responses({"input": "q"}))
    body["input"] += loop
    assert responses_violations(body) == [] and body["instructions"] == "Be brief." and "afm" not in body
    written = messages_body(
        {"model": "m", "max_tokens": 8}, ctx.messages, split_messages({"messages": [{"role": "user", "content": "q"}]})
    )
    assert anthropic_violations(written) == [] and written["system"] == "Be brief."
    assert written["messages"][0]["content"][0]["text"] == OPENING  # the context starts with the assistant
