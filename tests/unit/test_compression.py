"""The extractive compressor: whole sentences, safe trims, every fact kept (a pure text tool, run as is).

Token counts come from the unit tests' ``WordCounter`` (one token per word or mark): what is tested is
which sentences stay, not how a tokenizer counts them; tests/integration/test_compression_real.py
repeats the properties with o200k_base on real messages.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from afm_local.text import facts
from afm_local.text.extractive import ExtractiveCompressor, assemble, constraint_sentences, units
from afm_local.text.lexicon import split_sentences
from tests.support.fakes import WordCounter

DATA = Path(__file__).resolve().parents[2] / "data"
COMPRESSOR = ExtractiveCompressor(WordCounter())


def compress(text: str, ratio: float = 0.35) -> str:
    return COMPRESSOR.compress(text, ratio).text


def assert_whole_sentences(source: str, out: str) -> None:
    """Every sentence of ``out`` is a sentence of ``source``, as written or after its safe trims."""
    allowed = {u.verbatim for u in units(source)} | {u.trimmed for u in units(source)}
    for sentence in split_sentences(out):
        assert sentence in allowed, (sentence, source)


def own_messages() -> list[str]:
    rows = [
        json.loads(line) for line in (DATA / "compression" / "messages.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    rows += [
        json.loads(line)
        for line in (DATA / "importance" / "long_messages.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return [r["text"] for r in rows]


def test_the_issue_examples_stay_whole():
    """Each of issue 17's fragments came from one sentence; a sentence is never cut now."""
    avoid = (
        "I avoid staying in large, commercial hotel chains as I prefer unique, locally-owned accommodations "
        "that feel part of the neighbourhood."
    )
    sintra = "My wife wants one day trip to Sintra; we have no car and would like to avoid long queues."
    for text in (avoid, sintra, "What about the money side?", "Chiang Mai or Krabi?"):
        assert compress(text) == text
    chat = (
        f"Thanks, that's really helpful! {avoid} Honestly the markets sounded lovely and I can imagine us "
        f"spending whole mornings there. Sorry for the long message, my sister says I always write far too "
        f"much when I get excited about a trip. {sintra} What about the money side? Chiang Mai or Krabi?"
    )
    out = compress(chat)
    assert out != chat and "Thanks" not in out
    for sentence in (
        avoid,
        "My wife wants one day trip to Sintra",
        "we have no car and would like to avoid long queues.",
        "What about the money side?",
        "Chiang Mai or Krabi?",
    ):
        assert sentence in out
    assert facts.check(chat, out) is None


def test_every_fact_and_whole_sentences_on_our_own_messages():
    """Our 46 compression messages and 712 long classifier messages (own data, English and Russian)."""
    shortened = 0
    for text in own_messages():
        out = compress(text)
        assert facts.check(text, out) is None, (text, out)
        assert_whole_sentences(text, out)
        shortened += out != text
    assert shortened >= 80  # not vacuous: 94 of the 758 get shorter (most are fact-dense by design)


def test_safe_trims():
    text = (
        "Well, the hotel by the river (the one with the blue door) looked lovely in every photo we saw. "
        "We need 2 rooms (with 2 beds each) for 3 nights."
    )
    out = compress(text, 0.9)
    assert out.startswith("The hotel by the river looked lovely")  # opener and fact-free aside gone, capital kept
    assert "(with 2 beds each)" in out  # an aside with a number stays
    assert compress("Yes, and a table for the whole family near the window at the back please.", 0.3).startswith("Yes,")


def test_offers_and_small_talk_go_first_real_questions_stay():
    text = (
        "Thanks so much! The Golden Curry serves Indian food in the centre of town. "
        "It is a lovely quiet place with friendly staff and generous portions. Would you like me to book it?"
    )
    out = compress(text)
    assert out.startswith("The Golden Curry") and "book it" not in out and "Thanks" not in out
    question = "Yesterday I walked along the whole beach and through the old market. How do trams work here?"
    assert "How do trams work here?" in compress(question)


def test_a_small_saving_is_not_a_compressed_form():
    text = (
        "Hi, we would like a quiet room facing the garden, with a large desk, good light and a comfortable "
        "chair, since my husband works from the room every morning for a few hours."
    )
    assert compress(text) == text  # only "Hi, " could go: not worth a compressed form


def test_list_items_keep_their_lines():
    text = (
        "Here is what I packed for the kids, all of it light enough to carry on the long walk:\n"
        "- 2 water bottles\n- sun cream for the beach\n- a small umbrella that folds up nicely"
    )
    out = compress(text)
    assert out.splitlines()[1] == "- 2 water bottles"
    assert_whole_sentences(text, out)


def test_assemble_keeps_each_units_own_separator():
    parts = units("One thing.\n- two\n- three; four.")
    assert assemble(parts, [0, 2], trimmed=False) == "One thing.\n- three"
    assert assemble(parts, [1, 3], trimmed=False) == "- two\nfour."


def test_constraint_sentences_keep_constraints_verbatim():
    text = (
        "We fly to Lisbon in May and would love some tips. I am allergic to peanuts. The old town looked "
        "beautiful in the photos my sister sent. Thanks a lot for all your help so far!"
    )
    out = constraint_sentences(text, lambda ss: ["allergic" in s for s in ss], COMPRESSOR, 0.35)
    assert "I am allergic to peanuts." in out and "Thanks" not in out
    assert_whole_sentences(text, out)


_NUMBER = st.integers(min_value=2, max_value=9999).map(str)
_UNIT = st.sampled_from(["euros", "nights", "km", "people", "рублей", "ночей", "mg"])
_THING = st.sampled_from(["the night train", "street food", "peanut oil", "a layover", "hostels", "кредит", "мясо"])
_FACTS = st.one_of(
    st.builds("We need {} {} for the trip.".format, _NUMBER, _UNIT),
    st.builds("Please don't book {} for us.".format, _THING),
    st.builds("Я не хочу {} совсем.".format, _THING),
    st.builds("I would prefer {} over anything else.".format, _THING),
    st.builds("The budget is strictly {} {}.".format, _NUMBER, _UNIT),
)
_FILLER = st.sampled_from(
    [
        "Thanks a lot!",
        "That sounds lovely.",
        "I was thinking about it all morning while walking the dog.",
        "The weather has been really grey and windy lately.",
        "Honestly, it is all quite exciting.",
        "Спасибо большое!",
        "Мы долго думали об этом всей семьёй вечером.",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_FACTS, _FILLER), min_size=1, max_size=8), st.sampled_from([0.2, 0.35, 0.6]))
def test_property_facts_and_sentences_survive(sentences, ratio):
    text = " ".join(sentences)
    out = compress(text, ratio)
    assert facts.check(text, out) is None
    assert_whole_sentences(text, out)
    assert WordCounter().count(out) <= WordCounter().count(text)
