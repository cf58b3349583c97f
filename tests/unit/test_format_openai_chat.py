"""``split_chat``: an OpenAI messages list split into preamble, packed history, query and what follows."""

from __future__ import annotations

import pytest

from afm_local import InvalidInput, Turn
from afm_local.server.formats.openai_chat import split_chat, text_content
from afm_local.server.schemas import MAX_CONTENT_BYTES, ChatMessageIn


def chat(*pairs: tuple[str, object]) -> list[ChatMessageIn]:
    # model_construct: split_chat's own checks, for callers that did not validate (the route's model refuses
    # an unknown role first)
    return [ChatMessageIn.model_construct(role=role, content=content) for role, content in pairs]


def test_the_last_user_message_is_the_query_and_a_leading_system_message_the_preamble():
    split = split_chat(chat(("system", "Be brief."), ("user", "I am allergic to peanuts."), ("assistant", "Noted."),
                            ("user", "What should I eat?")))
    assert split.preamble == "Be brief."
    assert split.history == [Turn("user", "I am allergic to peanuts."), Turn("assistant", "Noted.")]
    assert split.query == "What should I eat?" and split.trailing == []


def test_developer_is_system_and_what_follows_the_query_is_passed_through():
    split = split_chat(chat(("developer", "Rules."), ("user", "hi"), ("developer", "late rule"), ("user", "q"),
                            ("tool", "result")))
    assert split.preamble == "Rules."
    assert [t.role for t in split.history] == ["user", "system"]
    assert split.trailing == [{"role": "tool", "content": "result"}]


def test_a_lone_system_message_before_the_query_is_history_only_when_there_is_more():
    split = split_chat(chat(("user", "q")))
    assert (split.preamble, split.history, split.query) == (None, [], "q")
    first = split_chat(chat(("system", "s"), ("user", "q")))
    assert first.preamble == "s" and first.history == []


def test_text_parts_are_joined_and_other_parts_refused():
    assert text_content([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert text_content(None) == ""
    with pytest.raises(InvalidInput, match="only text content parts"):
        text_content([{"type": "image_url", "image_url": {"url": "data:"}}])


@pytest.mark.parametrize(("messages", "error"), [
    ([("assistant", "hi")], "must contain a user message"),
    ([("wizard", "x"), ("user", "q")], "unknown role"),
    ([("user", "x" * (MAX_CONTENT_BYTES + 1))], "longer than"),
])
def test_bad_requests_are_invalid_input(messages, error):
    with pytest.raises(InvalidInput, match=error):
        split_chat(chat(*messages))
