"""The Responses and Anthropic formats: split into the core's turns, and written back valid for their API."""

from __future__ import annotations

import pytest

from afm_local import FocusManager, InvalidInput, Turn
from afm_local.core.turns import ToolCall
from afm_local.server.formats.anthropic import OPENING, messages_body, split_messages
from afm_local.server.formats.responses import responses_body, split_responses
from tests.support.api_rules import anthropic_violations, responses_violations
from tests.support.fakes import fake_components

CALL = ToolCall("c1", "get_weather", '{"city": "Paris"}')


def test_responses_items_become_turns_and_calls_join_the_assistant_turn_before_them():
    split = split_responses({"instructions": "Be brief.", "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "18C"},
        {"role": "user", "content": "And tomorrow?"},
        {"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": "{}"},
    ]})
    assert split.preamble == "Be brief." and split.query == "And tomorrow?"
    assert split.history == [Turn("user", "Weather?"), Turn("assistant", "Checking.", tool_calls=(CALL,)),
                             Turn("tool", "18C", tool_call_id="c1")]
    assert split.trailing == [{"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": "{}"}]


@pytest.mark.parametrize(("body", "error"), [
    ({"input": "hi", "previous_response_id": "resp_1"}, "previous_response_id"),
    ({"input": [{"role": "assistant", "content": "x"}]}, "user message"),
    ({"input": [{"type": "web_search_call", "id": "w"}, {"role": "user", "content": "q"}]}, "cannot be packed"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]}, "only text"),
    ({"input": " "}, "query .* is empty"),  # found by the fuzz tests: the writer would forward "input": []
    ({"input": [{"role": "user", "content": "q"}, {"role": "user", "content": ""}]}, "query .* is empty"),
])
def test_responses_requests_that_cannot_be_packed_are_refused(body, error):
    with pytest.raises(InvalidInput, match=error):
        split_responses(body)


def test_anthropic_blocks_become_turns_and_results_with_the_query_stay_in_the_history():
    split = split_messages({"system": [{"type": "text", "text": "Be brief."}], "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "..."}, {"type": "text", "text": "Checking."},
                                          {"type": "tool_use", "id": "c1", "name": "get_weather",
                                           "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "18C"},
                                     {"type": "text", "text": "And tomorrow?"}]},
    ]})
    assert split.preamble == "Be brief." and split.query == "And tomorrow?" and split.trailing == []
    assert split.history == [Turn("user", "Weather?"), Turn("assistant", "Checking.", tool_calls=(CALL,)),
                             Turn("tool", "18C", tool_call_id="c1")]


def test_anthropic_blank_text_is_no_query():
    """Found by the fuzz tests: an empty text block counted as the query, and the writer forwarded no message."""
    with pytest.raises(InvalidInput, match="user message with text"):
        split_messages({"messages": [{"role": "user", "content": ""}]})
    split = split_messages({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
                                         {"role": "user", "content": [{"type": "text", "text": "  "}]}]})
    assert split.query == "q" and len(split.trailing) == 2


def test_anthropic_images_are_refused_until_attachments_land():
    with pytest.raises(InvalidInput, match="cannot be packed"):
        split_messages({"messages": [{"role": "user", "content": [{"type": "image", "source": {}},
                                                                  {"type": "text", "text": "q"}]}]})


@pytest.mark.parametrize("budget", [40, 90, 400])
def test_packed_contexts_are_written_back_valid_for_both_apis(budget):
    fm = FocusManager(components=fake_components())
    fm.add_messages([
        {"role": "assistant", "content": "Hello, where to?"},
        {"role": "user", "content": "Paris. What is the weather like there in spring?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": "{}"},
                                                            {"id": "c2", "name": "get_time", "arguments": "{}"}]},
        {"role": "tool", "content": "Mild, 14C, some showers in the afternoons of April.", "tool_call_id": "c1"},
        {"role": "tool", "content": "14:05", "tool_call_id": "c2"},
    ])
    ctx = fm.build_context("Pack an umbrella?", budget, "Be brief.")
    loop = [{"type": "function_call", "call_id": "c9", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c9", "output": "ok"}]
    body = responses_body({"model": "m", "afm": {}}, ctx.messages, split_responses({"input": "q"}))
    body["input"] += loop
    assert responses_violations(body) == [] and body["instructions"] == "Be brief." and "afm" not in body
    written = messages_body({"model": "m", "max_tokens": 8}, ctx.messages, split_messages(
        {"messages": [{"role": "user", "content": "q"}]}))
    assert anthropic_violations(written) == [] and written["system"] == "Be brief."
    assert written["messages"][0]["content"][0]["text"] == OPENING  # the context starts with the assistant
