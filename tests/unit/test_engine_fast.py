"""The engine over fake components: validation, tags, accounting and the fit loop, in milliseconds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from afm_local import AFMConfig, BudgetTooSmall, Fidelity, FocusManager, Importance, InvalidInput
from afm_local.core.accounting import sent_cost
from afm_local.core.parts import Attached, Attachment
from tests.support.fakes import fake_components

HISTORY = [
    {"role": "user", "content": "We are planning a trip to Thailand in March."},
    {"role": "user", "content": "I have a severe peanut allergy, so nothing with peanuts ever."},
    {"role": "assistant", "content": "Noted. Bangkok, Chiang Mai and the islands are all good in March."},
    {"role": "user", "content": "Which area of Bangkok is best for a first visit with good street food?"},
    {"role": "assistant", "content": "Try Sukhumvit or the old town; street food is everywhere, ask about peanuts."},
    {"role": "user", "content": "thanks"},
]


def manager(config: AFMConfig | None = None) -> FocusManager:
    fm = FocusManager(config, components=fake_components())
    fm.add_messages(HISTORY)
    return fm


def test_rules_flag_the_allergy_and_small_talk():
    fm = manager()
    labels = [m.importance for m in fm.messages]
    assert labels[1] is Importance.CRITICAL and labels[5] is Importance.TRIVIAL


@pytest.mark.parametrize("render", ["chat", "structured"])
@pytest.mark.parametrize("budget", [150, 200, 400])
def test_everything_sent_is_counted_and_fits(render, budget):
    fm = manager()
    ctx = fm.build_context("What food should I try?", budget, "You are a travel assistant.", render=render)
    assert ctx.tokens_used == sent_cost(fm.components.counter, ctx.messages, fm.config) <= budget
    assert ctx.items[1].fidelity is Fidelity.FULL
    assert ctx.messages[-1] == {"role": "user", "content": "What food should I try?"}


def test_budget_too_small_names_the_minimum():
    fm = manager(AFMConfig.paper())
    with pytest.raises(BudgetTooSmall) as err:
        fm.build_context("What food should I try?", 20)
    assert err.value.minimum > 20 and "minimum budget" in str(err.value)
    fm.build_context("What food should I try?", err.value.minimum)


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "100"])
def test_bad_budgets_are_invalid_input(bad):
    with pytest.raises(InvalidInput):
        manager().build_context("q", bad)


def test_unknown_role_and_importance_are_invalid_input():
    fm = FocusManager(components=fake_components())
    with pytest.raises(InvalidInput, match="unknown role"):
        fm.add_message("robot", "hi")
    with pytest.raises(InvalidInput, match="unknown importance"):
        fm.add_message("user", "hi", importance="urgent")


def test_tags_win_and_are_not_sent():
    fm = FocusManager(components=fake_components())
    crit = fm.add_message("user", "[!] Only window seats, please.")
    triv = fm.add_message("user", "[TRIVIAL] My allergy to peanuts is severe.")
    assert (crit.importance, crit.importance_source, crit.content) == (
        Importance.CRITICAL,
        "tag",
        "Only window seats, please.",
    )
    assert triv.importance is Importance.TRIVIAL
    ctx = fm.build_context("Where should I sit?", 200)
    assert all("[!]" not in m["content"] for m in ctx.messages)


def test_paper_preset_is_the_papers_rules():
    cfg = AFMConfig.paper()
    assert (cfg.packing, cfg.fill, cfg.similarity_floor, cfg.max_placeholders) == ("paper", "chronological", None, None)
    assert (cfg.half_life, cfg.full_threshold, cfg.compressed_threshold) == (12.0, 0.45, 0.25)


def test_paper_preset_follows_the_papers_rules_on_a_fixed_history():
    """AFMConfig.paper(): the paper's score, thresholds, intended forms only and one greedy chronological pass,
    recomputed here message by message from the formulas, independently of the engine's array code."""
    import numpy as np

    from tests.support import reference_packing as ref

    cfg = AFMConfig.paper()
    fm = manager(cfg)
    query = "Which street food in Bangkok is safe for me?"
    budget = 120
    ctx = fm.build_context(query, budget)
    comps = fm.components
    q = comps.embedder.embed([query])[0]
    counter, n = comps.counter, len(HISTORY)
    expected_items = []
    for i, m in enumerate(fm.messages):
        w = 0.5 ** ((n - i) / 12)
        sim = max(0.0, float(comps.embedder.embed([m.content])[0] @ q))
        score = {
            Importance.CRITICAL: 1.0,
            Importance.RELEVANT: sim * (0.4 + 0.4 * w),
            Importance.TRIVIAL: sim * 0.25 * w,
        }[m.importance]
        intended = (
            Fidelity.FULL
            if m.importance is Importance.CRITICAL or score >= 0.45
            else Fidelity.COMPRESSED
            if score >= 0.25
            else Fidelity.PLACEHOLDER
        )
        per = fm.config.per_message_overhead  # 3 of framing and the role's token
        costs = {
            Fidelity.FULL: m.tokens_full + per,
            Fidelity.COMPRESSED: min(m.tokens_compressed, m.tokens_full) + per,
            Fidelity.PLACEHOLDER: m.tokens_placeholder + per,
        }
        expected_items.append(ref.Item(False, score, intended, costs))
        assert ctx.items[i].score == pytest.approx(score) and ctx.items[i].intended is intended
    fixed = counter.count(query) + fm.config.per_message_overhead + fm.config.reply_overhead
    expected = ref.pack(expected_items, budget - fixed, packing="paper")
    assert [it.fidelity for it in ctx.items] == expected
    assert ctx.tokens_used == fixed + sum(ref.cost(it, f) for it, f in zip(expected_items, expected))
    with pytest.raises(BudgetTooSmall):  # the paper refuses when a constraint cannot be sent whole
        fm.build_context(query, fixed + fm.messages[1].tokens_full)
    assert np.isfinite(ctx.items[0].recency)


LONG_CHAT = [
    {"role": "user" if k % 2 == 0 else "assistant", "content": text}
    for k, text in enumerate(
        [f"Chat {i}: we talked about the weather in town number {i} and nothing else at all." for i in range(40)]
        + [
            "My sister Olga works at a bakery in Porto. She bakes bread every morning before dawn. The town has a "
            "river, two bridges and a market on Sundays. Tourists come in summer for the old churches and the tiles."
        ]
        + [f"Later {i}: the train schedule for line {i} changed again this week, as usual." for i in range(40)]
    )
]

ASK = "Which bakery does my sister Olga work at in Porto?"


def test_runs_left_out_become_one_line_each_and_are_counted():
    fm = FocusManager(components=fake_components())
    fm.add_messages(LONG_CHAT)
    ctx = fm.build_context(ASK, 400, render="chat")
    assert ctx.tokens_used == sent_cost(fm.components.counter, ctx.messages, fm.config) <= 400
    lines = [it for it in ctx.items if it.reason.startswith("placeholder: turns")]
    assert lines, "a run left out is named"
    heads = [it for it in lines if it.text]
    assert any(it.text.startswith("[Turns ") for it in heads)  # one line for a whole run, sent once
    assert all(it.text.startswith("[Turn") for it in heads)  # a run of one message: its own turn line
    assert sum(m["content"].startswith("[Turn") for m in ctx.messages) == len(heads) < len(lines)
    assert ctx.items[40].fidelity in (Fidelity.FULL, Fidelity.COMPRESSED)  # the evidence itself is sent


def test_the_excerpt_is_the_sentence_the_query_asks_about():
    fm = FocusManager(components=fake_components())
    fm.add_messages(LONG_CHAT)
    ctx = fm.build_context(ASK, 45, render="chat")  # room for a sentence, not the whole message
    item = ctx.items[40]
    assert item.fidelity is Fidelity.COMPRESSED and item.text == "My sister Olga works at a bakery in Porto."
    assert "My sister Olga works at a bakery in Porto." in [m["content"] for m in ctx.messages]
    paper = FocusManager(AFMConfig.paper(overflow="degrade"), components=fake_components())
    paper.add_messages(LONG_CHAT)
    assert not any(m["content"].startswith("[Turns ") for m in paper.build_context("Where?", 400).messages)


def test_a_message_with_images_or_files_is_never_excerpted():
    """Its compressed form is its own (a thumbnail and a summary): relevance scores its sentences but does not
    send one of them in its place."""
    fm = FocusManager(components=fake_components())
    fm.add_messages(LONG_CHAT)
    message = fm.messages[40]
    assert message.sentences is not None and message.excerptable
    image = Attached(Attachment("image_url", url="https://x.org/a.png"), None, "a.png", "", 0, None, 85, 85)
    assert not replace(message, attachments=(image,)).excerptable
