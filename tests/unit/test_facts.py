"""The facts a shorter form must keep, and the guard's text checks: pure text, no model."""

from __future__ import annotations

import pytest

from afm_local.text import facts
from afm_local.text.checks import cut_off, words_dropped
from afm_local.text.lexicon import split_sentences

# The three forms issue 17 quotes, each beside the message it was made from.
AVOID = (
    "I avoid staying in large, commercial hotel chains as I prefer unique, locally-owned accommodations "
    "that feel part of the neighbourhood."
)
SINTRA = "My wife wants one day trip to Sintra; we have no car and would like to avoid long queues."


def test_the_issue_fragments_are_caught():
    assert facts.check(AVOID, "I avoid staying in large.")[0] == "dropped negation"  # "avoid" governs "commercial"
    assert facts.check(SINTRA, "we have no car avoid long queues.") is not None
    assert words_dropped("we have no car and would like to avoid long queues.", "we have no car avoid long queues.")
    assert words_dropped("What about the money side?", "What about money.")
    assert words_dropped("Should we go to Chiang Mai or Krabi?", "Chiang Mai Krabi?")


def test_whole_sentences_and_parentheticals_are_not_words_dropped():
    source = "We land on 12 March (a Sunday). The hotel is near the river. What about the money side?"
    assert not words_dropped(source, "We land on 12 March. What about the money side?")
    assert not words_dropped(source, "The hotel is near the river.")
    assert not words_dropped(source, "River hotel, landing 12 March.")


@pytest.mark.parametrize(
    "source, kept, lost",
    [
        ("Бюджет строго не более 300 000 рублей.", "Бюджет строго не более 300 тыс. рублей.", None),
        ("The total is $4,000 including flights.", "4000 dollars in total.", None),
        ("We need 2 accessible rooms.", "We need 2 rooms.", "dropped unit"),
        ("We need 2 accessible rooms.", "We need accessible rooms.", "dropped number"),
        ("Dinner at 19:00 please.", "Dinner at 19:30 please.", "dropped number"),
        ("We have two kids.", "We have 2 kids.", None),
        ("We travel with one boy and a girl.", "We travel with a boy and a girl.", "dropped number"),
    ],
)
def test_numbers_keep_their_units(source, kept, lost):
    found = facts.check(source, kept)
    assert (found[0] if found else None) == lost


def test_what_is_not_a_number():
    assert facts.numbers("1. Pack light\n2. Book early") == []  # list markers
    assert facts.numbers("I like this one better") == []  # "one" as a pronoun
    assert facts.numbers("Take the one on the left, or one of the others") == []
    assert [n.unit for n in facts.numbers("one day trip to Sintra")] == ["day"]
    invented = facts.check("We stay a week.", "We stay 9 nights.")
    assert invented == ("invented number", {"invented": "9"})


def test_negation_scope_keeps_verb_and_object():
    source = "We don't want to stay in hostels."
    assert facts.scopes(source)[0].words == ("stay", "hostels")
    assert facts.check(source, "We want to stay in hostels.")[0] == "dropped negation"
    assert facts.check(source, "No hostels, please.")[0] == "dropped negation"  # the negated verb went
    assert facts.check(source, "We will not stay in hostels.") is None
    # Russian puts the object before the negation: the words before it count when few follow.
    assert facts.scopes("Кредит брать не будем.")[0].words == ("Кредит", "брать", "будем")
    assert facts.check("Кредит брать не будем.", "Не будем брать.")[0] == "dropped negation"


def test_preference_needs_its_object_and_questions_state_none():
    assert facts.scopes("Would you like a table by the window?") == []
    scope = facts.scopes("I'd like a decaf latte with oat milk.")[0]
    assert scope.kind == "preference" and scope.words == ("decaf", "latte", "oat")
    assert facts.check("I'd like a decaf latte with oat milk.", "A latte.")[0] == "dropped preference"


def test_names_match_by_stem():
    source = "Поставщик из Иваново, склад в Москве."
    assert facts.check(source, "Поставщик в Иванове, склад в Москве.") is None
    assert facts.check(source, "Поставщик есть, склад в Москве.") == ("dropped name", {"missing": "Иваново"})


def test_tally_counts_every_fact_once():
    tally = facts.tally(SINTRA, "We have no car and would like to avoid long queues.")
    assert tally["name"] == (0, 1) and tally["number"] == (0, 1)
    assert tally["negation"][1] == 2 and tally["preference"][1] == 3
    assert all(kept == total for kept, total in facts.tally(SINTRA, SINTRA).values())


def test_cut_off_finds_a_summary_stopped_by_its_token_cap():
    source = "Продавать планируем детскую одежду из хлопка от поставщика из Иваново."
    assert cut_off(source, "Продавать плани")
    assert cut_off(source, "Продавать планируем детскую")
    assert not cut_off(source, "Продавать планируем детскую одежду из хлопка от поставщика из Иваново")
    assert not cut_off(
        "Restaurants must not cook with peanut oil, and never suggest street food.",
        "Restaurants must not cook with peanut oil",
    )  # ends where the source has a comma


@pytest.mark.parametrize(
    "text, sentences",
    [
        ("Mr. Smith arrives at 5 p.m. on Friday. Book a taxi!", 2),
        ("I love J. K. Rowling. Ok, I need a taxi. ok. i mean it", 2),
        ("Т.е. завтра, ул. Ленина, д. 5. Потом домой.", 2),
        ("Options:\n- a hotel\n- a hostel", 3),
        ("Bring water; the hike is long.", 2),
        ('He said "No." Then he left.', 2),
        ("It costs 3.5 euros… really? Yes!", 2),
    ],
)
def test_sentence_splitter(text, sentences):
    assert len(split_sentences(text)) == sentences, split_sentences(text)
