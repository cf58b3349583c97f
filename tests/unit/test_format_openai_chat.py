"""``split_chat``: an OpenAI messages list split into preamble, packed history, query and what follows."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from afm_local import InvalidInput, Turn
from afm_local.server.formats.openai_chat import split_chat, text_content
from afm_local.server.schemas import (
    MAX_CONTENT_BYTES,
    ChatCompletionRequest,
    ChatMessageIn,
    MessagesRequest,
    ResponsesRequest,
)


def chat(*pairs: tuple[str, object]) -> list[ChatMessageIn]:
    # model_construct: split_chat's own checks, for callers that did not validate (the route's model refuses
    # an unknown role first)
    return [ChatMessageIn.model_construct(role=role, content=content) for role, content in pairs]


def test_the_last_user_message_is_the_query_and_a_leading_system_message_the_preamble():
    split = split_chat(
        chat(
            ("system", "Be brief."),
            ("user", "I am allergic to peanuts."),
            ("assistant", "Noted."),
            ("user", "What should I eat?"),
        )
    )
    assert split.preamble == "Be brief."
    assert split.history == (Turn("user", "I am allergic to peanuts."), Turn("assistant", "Noted."))
    assert split.query == "What should I eat?" and split.loop == ()


def test_developer_is_system_and_what_follows_the_query_is_the_loop_packed_after_it():
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    messages = chat(("developer", "Rules."), ("user", "hi"), ("developer", "late rule"), ("user", "q"))
    messages += [
        ChatMessageIn.model_construct(role="assistant", content=None, tool_calls=[call]),
        ChatMessageIn.model_construct(role="tool", content="result", tool_call_id="c1"),
    ]
    split = split_chat(messages)
    assert split.preamble == "Rules."
    assert [t.role for t in split.history] == ["user", "system"]
    assert [t.role for t in split.loop] == ["assistant", "tool"] and split.loop[1].tool_call_id == "c1"


def test_a_tool_message_without_its_call_id_is_refused_naming_the_field():
    with pytest.raises(InvalidInput, match="tool_call_id") as refused:
        split_chat(chat(("user", "q"), ("tool", "result")))
    assert refused.value.param == "messages[1].tool_call_id"


def test_a_lone_system_message_before_the_query_is_history_only_when_there_is_more():
    split = split_chat(chat(("user", "q")))
    assert (split.preamble, split.history, split.query) == (None, (), "q")
    first = split_chat(chat(("system", "s"), ("user", "q")))
    assert first.preamble == "s" and first.history == ()


def test_text_parts_are_joined_images_and_files_kept_and_other_parts_refused():
    assert text_content([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert text_content(None) == ""
    with pytest.raises(InvalidInput, match="only base64 data: URLs"):
        text_content([{"type": "image_url", "image_url": {"url": "data:"}}])
    with pytest.raises(InvalidInput, match="unsupported type 'input_audio'"):
        text_content([{"type": "input_audio"}])
    image = {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}
    split = split_chat(
        chat(("user", [{"type": "text", "text": "look"}, image]), ("user", [{"type": "text", "text": "q"}, image]))
    )
    assert split.history[0].content == "look" and split.history[0].attachments[0].url == "https://example.org/a.png"
    assert split.query == "q" and split.query_parts == (image,)


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([("assistant", "hi")], "must contain a user message"),
        ([("wizard", "x"), ("user", "q")], "unknown role"),
        ([("user", "x" * (MAX_CONTENT_BYTES + 1))], "the limit is"),
    ],
)
def test_bad_requests_are_invalid_input(messages, error):
    with pytest.raises(InvalidInput, match=error):
        split_chat(chat(*messages))


@pytest.mark.parametrize(
    ("model", "field", "value"),
    [
        (ChatCompletionRequest, "temperature", True),  # found by the fuzz tests: accepted as 1.0 and forwarded
        (ChatCompletionRequest, "max_tokens", True),
        (ChatCompletionRequest, "stream", 1),
        (ResponsesRequest, "stream", "true"),
        (MessagesRequest, "max_tokens", False),
    ],
)
def test_the_proxies_forwarded_numbers_and_flags_are_strict(model, field, value):
    body = {"messages": [{"role": "user", "content": "q"}], "input": "q", "max_tokens": 8}
    model.model_validate({**body, field: 1 if field != "stream" else True})  # the right type passes
    with pytest.raises(ValidationError):
        model.model_validate({**body, field: value})
