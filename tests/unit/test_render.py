"""Turn lines: a placeholder within its token cap, and the reference line of a restated constraint."""

from __future__ import annotations

import pytest

from afm_local.core.render import placeholder, reference_line, turn_line
from tests.support.fakes import WordCounter

COUNTER = WordCounter()  # one token per word or punctuation mark


def test_turn_lines_number_turns_from_one():
    assert turn_line(0, "user", "hotel options") == "[Turn 1 · user: hotel options]"
    assert turn_line(4, "assistant") == "[Turn 5 · assistant]"
    assert reference_line(2, "user") == "[Turn 3 · user: constraint, restated later]"


def test_placeholder_keeps_whole_key_phrases_while_they_fit():
    line, tokens = placeholder(4, "assistant", "hotel options, Bangkok river", COUNTER, 64)
    assert line == "[Turn 5 · assistant: hotel options, Bangkok river]"
    assert tokens == COUNTER.count(line)


def test_placeholder_drops_phrases_then_words_then_the_label():
    topic = "cheap riverside hotel options, Bangkok night markets"
    whole = COUNTER.count(turn_line(0, "user", topic))
    line, tokens = placeholder(0, "user", topic, COUNTER, whole - 1)
    assert line == "[Turn 1 · user: cheap riverside hotel options]"  # the last phrase went first
    line, tokens = placeholder(0, "user", topic, COUNTER, COUNTER.count("[Turn 1 · user: cheap riverside]"))
    assert line == "[Turn 1 · user: cheap riverside]"  # then the first phrase, word by word
    bare = "[Turn 1 · user]"
    assert placeholder(0, "user", topic, COUNTER, COUNTER.count(bare)) == (bare, COUNTER.count(bare))


@pytest.mark.parametrize("topic", ["", " , ", "message"])
def test_placeholder_of_an_empty_or_tiny_topic(topic):
    line, tokens = placeholder(9, "tool", topic, COUNTER, 12)
    assert line.startswith("[Turn 10 · tool") and tokens <= 12


def test_placeholder_over_the_cap_is_the_bare_line():
    """Even the bare line may not fit a tiny cap: it is returned with its count, and the caller decides."""
    line, tokens = placeholder(0, "user", "anything", COUNTER, 1)
    assert (line, tokens) == ("[Turn 1 · user]", COUNTER.count("[Turn 1 · user]"))
