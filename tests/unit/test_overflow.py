"""The overflow path end to end on fake components: properties over random histories and budgets, and the
three degrade steps on small fixed cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from afm_local import AFMConfig, BudgetTooSmall, Fidelity, FocusManager, Importance
from afm_local.core.accounting import sent_cost
from tests.support.fakes import fake_components

CONSTRAINTS = [
    "I have a severe peanut allergy, so nothing with peanuts ever.",
    "Our budget is strictly no more than 300 euros for the whole trip.",
    "I take warfarin, so never suggest anything that thins the blood.",
    "The report has a hard deadline on Friday at noon.",
]
OTHER = [
    "Which museums in Lisbon are worth a morning?",
    "The tram 28 goes past the cathedral and up to the castle.",
    "thanks",
    "We could also take a day trip to Sintra by train.",
    "Pastel de nata is best warm, with a little cinnamon on top.",
]


@st.composite
def histories(draw):
    rows = []
    for _ in range(draw(st.integers(1, 30))):
        text = draw(st.sampled_from(CONSTRAINTS + OTHER))
        if draw(st.integers(0, 3)) == 0:
            text += " " + " ".join(draw(st.lists(st.sampled_from(OTHER), max_size=3)))
        row = {"role": draw(st.sampled_from(["user", "assistant"])), "content": text}
        if draw(st.integers(0, 5)) == 0:
            row["importance"] = "CRITICAL"  # the user's word: pinned
        rows.append(row)
    return rows


@settings(max_examples=60, deadline=None)
@given(histories(), st.integers(20, 400), st.sampled_from(["chat", "structured"]))
def test_degrade_never_goes_over_and_never_touches_what_the_user_marked(rows, budget, render):
    fm = FocusManager(AFMConfig(), components=fake_components())
    fm.add_messages(rows)
    try:
        ctx = fm.build_context("What should we do tomorrow?", budget, render=render)
    except BudgetTooSmall as err:  # only when the pinned constraints alone cannot fit
        pinned = sum(m.tokens_full + fm.config.per_message_overhead for m in fm.messages if m.pinned)
        assert "tagged" in str(err) or pinned == 0
        assert err.minimum > budget
        return
    assert ctx.tokens_used == sent_cost(fm.components.counter, ctx.messages, fm.config) <= budget
    for m, item in zip(fm.messages, ctx.items):
        assert item.reason  # every message says why it took its form
        if m.pinned:
            assert item.fidelity is Fidelity.FULL
        elif m.importance is Importance.CRITICAL and item.fidelity is not Fidelity.FULL:
            assert item.reason.startswith(("demoted", "critical, restated", "critical: its constraint"))


@settings(max_examples=40, deadline=None)
@given(histories(), st.integers(20, 600))
def test_spending_the_budget_never_sends_less(rows, budget):
    fm = FocusManager(AFMConfig(), components=fake_components())
    fm.add_messages(rows)
    try:
        spent = fm.build_context("What should we do tomorrow?", budget)
    except BudgetTooSmall:
        return
    intended = fm.build_context("What should we do tomorrow?", budget, spend="intended")
    rank = {f: i for i, f in enumerate(Fidelity)}
    content = (Fidelity.FULL, Fidelity.COMPRESSED)
    for a, b in zip(spent.items, intended.items):  # what the scores meant to send is never sent less ...
        if b.intended in content and b.fidelity in content:
            assert rank[a.fidelity] <= rank[b.fidelity]
    # ... though stubs may give way to messages' text (a short message's text can cost less than its stub)
    stub = max((m.tokens_placeholder + fm.config.per_message_overhead for m in fm.messages), default=0)
    gave_way = sum(
        b.fidelity is Fidelity.PLACEHOLDER and a.fidelity is not Fidelity.PLACEHOLDER
        for a, b in zip(spent.items, intended.items)
    )
    assert spent.tokens_used >= intended.tokens_used - stub * max(1, gave_way)


def manager(rows, **config):
    fm = FocusManager(AFMConfig(**config), components=fake_components())
    fm.add_messages(rows)
    return fm


def test_a_restated_constraint_is_sent_once_with_a_reference_to_the_newest():
    older = "I have a severe peanut allergy, so keep peanuts and peanut oil out of every meal you suggest."
    newer = (
        "Reminder: I have a severe peanut allergy, so keep peanuts and peanut oil out of every meal you suggest, "
        "please."
    )
    other = (
        "I have a severe sesame allergy, so keep sesame and sesame oil out of every meal you suggest."  # never merged
    )
    # the bag-of-words fake puts the two wordings at a cosine of about 0.75; the text check does the rest
    fm = manager(
        [{"role": "user", "content": t} for t in (older, other, *OTHER, newer)],
        consolidate_similarity=0.6,
        critical_share=None,
    )
    full = sum(
        m.tokens_full + fm.config.per_message_overhead for m in fm.messages if m.importance is Importance.CRITICAL
    )
    fixed = fm.build_context("q", 10_000).tokens_used - sum(
        it.tokens + fm.config.per_message_overhead for it in fm.build_context("q", 10_000).items
    )
    ctx = fm.build_context("q", fixed + full - 1)  # one token short of every constraint whole
    assert ctx.items[0].fidelity is Fidelity.PLACEHOLDER
    assert ctx.items[0].reason == f"critical, restated in turn {len(OTHER) + 3}: sent once, as a reference"
    assert ctx.items[0].text == "[Turn 1 · user: constraint, restated later]"
    assert ctx.items[1].fidelity is Fidelity.FULL and ctx.items[-1].fidelity is Fidelity.FULL


def test_least_certain_model_criticals_go_first_and_a_tagged_one_never():
    rows = [{"role": "user", "content": c} for c in CONSTRAINTS]
    rows[0]["importance"] = "CRITICAL"
    fm = manager(rows, critical_share=None)
    ctx = fm.build_context("q", 40)
    assert ctx.items[0].fidelity is Fidelity.FULL and ctx.items[0].reason == "critical: sent whole"
    assert any(it.reason.startswith("demoted") for it in ctx.items[1:])
    with pytest.raises(BudgetTooSmall, match="tagged"):
        fm.build_context("q", 10)


def test_the_paper_preset_refuses_instead():
    fm = manager([{"role": "user", "content": c} for c in CONSTRAINTS], overflow="raise")
    with pytest.raises(BudgetTooSmall, match="every CRITICAL message"):
        fm.build_context("q", 40)


@pytest.mark.parametrize("demote", ["relevance", "certainty"])
def test_of_equally_certain_criticals_the_one_unrelated_to_the_question_gives_way(demote):
    rows = [{"role": "user", "content": CONSTRAINTS[1]}, {"role": "user", "content": CONSTRAINTS[3]}]
    fm = manager(rows, critical_share=None, demote=demote)
    query = "How much can we spend on the whole trip, in euros?"
    whole = fm.build_context(query, 10_000)
    budget = whole.tokens_used - whole.items[1].tokens - 3  # room for one of the two only
    ctx = fm.build_context(query, budget)
    kept = [it.fidelity is Fidelity.FULL for it in ctx.items]
    # relevance keeps the budget cap the question is about; certainty (a tie) demotes the older first
    assert kept == ([True, False] if demote == "relevance" else [False, True]), [it.reason for it in ctx.items]
