"""AFM keeps the peanut allergy verbatim where naive replay loses it (real local components)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from afm_local import AFMConfig, BudgetTooSmall, FocusManager, local_components
from afm_local.core.baselines import naive_replay, recency_compression, stateless
from afm_local.core.vocabulary import Fidelity
from afm_local.text.classifier import LayeredClassifier

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = json.loads((ROOT / "examples" / "peanut_trip.json").read_text(encoding="utf-8"))
ALLERGY = SCENARIO["messages"][1]["content"]


@pytest.fixture(scope="module")
def installed():
    return local_components(threads=1)


@pytest.fixture(scope="module")
def comps(installed):
    """The real local stack with the rule layer as classifier: the guarantee under test must hold for it."""
    return replace(installed, classifier=LayeredClassifier(None))


@pytest.fixture(scope="module")
def manager(comps):
    fm = FocusManager(AFMConfig(), components=comps)
    fm.add_messages(SCENARIO["messages"])
    return fm


def _check_afm(ctx, budget):
    assert ctx.tokens_used <= budget
    assert ctx.items[1].fidelity is Fidelity.FULL
    first = ctx.messages[0]
    assert first["role"] == "system"
    critical_block = first["content"].split("### CRITICAL", 1)[1].split("\n### ", 1)[0]
    assert ALLERGY in critical_block


@pytest.mark.parametrize("budget", [300, 500, 800])
def test_afm_with_installed_classifier(installed, budget):
    """Same guarantee with whatever ``local_components`` installs (the trained model when present).

    If that classifier marks so many messages CRITICAL that the budget cannot hold them, the engine
    raises ``BudgetTooSmall``; that is reported as an expected failure naming the classifier, not hidden.
    """
    fm = FocusManager(AFMConfig(), components=installed)
    fm.add_messages(SCENARIO["messages"])
    assert fm.messages[1].importance.value == "CRITICAL"
    try:
        ctx = fm.build_context(
            current_query=SCENARIO["query"],
            budget_tokens=budget,
            system_preamble=SCENARIO["preamble"],
            render="structured",
            packing="afm",
        )
    except BudgetTooSmall as exc:
        n = sum(m.importance.value == "CRITICAL" for m in fm.messages)
        pytest.xfail(
            f"classifier {installed.classifier.name} marks {n} messages CRITICAL; minimum budget {exc.minimum}"
        )
    _check_afm(ctx, budget)


def _sent_tokens(comps, messages, cfg=AFMConfig()):
    return sum(comps.counter.count(m["content"]) + cfg.per_message_overhead for m in messages) + cfg.reply_overhead


@pytest.mark.parametrize("budget", [300, 500, 800])
def test_afm_keeps_allergy_naive_replay_loses_it(comps, manager, budget):
    assert "allergy" in ALLERGY
    ctx = manager.build_context(
        current_query=SCENARIO["query"],
        budget_tokens=budget,
        system_preamble=SCENARIO["preamble"],
        render="structured",
        packing="afm",
    )
    _check_afm(ctx, budget)

    naive = naive_replay(
        SCENARIO["messages"], SCENARIO["query"], budget, counter=comps.counter, preamble=SCENARIO["preamble"]
    )
    assert naive.tokens_used <= budget
    assert naive.tokens_used == _sent_tokens(comps, naive.messages)
    assert not any("allergy" in m["content"] for m in naive.messages)


def test_the_example_is_longer_than_every_budget_tested(comps):
    """Otherwise a sliding window would hold the whole chat and there would be nothing to lose."""
    everything = _sent_tokens(
        comps, [{"content": SCENARIO["preamble"]}, *SCENARIO["messages"], {"content": SCENARIO["query"]}]
    )
    assert everything > 800


@pytest.mark.parametrize("budget", [300, 500, 800])
def test_baselines_shape_and_budget(comps, budget):
    hist, q, pre = SCENARIO["messages"], SCENARIO["query"], SCENARIO["preamble"]
    for ctx in (
        stateless(hist, q, budget, counter=comps.counter, preamble=pre),
        naive_replay(hist, q, budget, counter=comps.counter, preamble=pre),
        recency_compression(hist, q, budget, counter=comps.counter, compressor=comps.compressor, preamble=pre),
    ):
        assert ctx.messages[0] == {"role": "system", "content": pre}
        assert ctx.messages[-1] == {"role": "user", "content": q}
        assert all(set(m) == {"role", "content"} for m in ctx.messages)
        assert ctx.tokens_used <= budget
        assert ctx.tokens_used == _sent_tokens(comps, ctx.messages)


def test_placeholder_cap_and_similarity_floor_never_unprotect_critical(comps, manager):
    """The long-conversation fields (off in the paper preset) keep every CRITICAL guarantee."""
    assert AFMConfig.paper().similarity_floor is None
    capped = FocusManager(AFMConfig(max_placeholders=5), components=comps)
    capped.add_messages(SCENARIO["messages"])
    floored = FocusManager(AFMConfig(scoring="paper", similarity_floor=0.8, placeholders="message"), components=comps)
    floored.add_messages(SCENARIO["messages"])
    for budget in (300, 500):
        assert floored.build_context(SCENARIO["query"], budget, SCENARIO["preamble"]).items[1].fidelity is Fidelity.FULL
        ctx = capped.build_context(
            current_query=SCENARIO["query"],
            budget_tokens=budget,
            system_preamble=SCENARIO["preamble"],
            render="structured",
        )
        assert ctx.tokens_used <= budget
        assert ctx.items[1].fidelity is Fidelity.FULL
        assert sum(it.fidelity is Fidelity.PLACEHOLDER for it in ctx.items) <= 5
        default = manager.build_context(
            current_query=SCENARIO["query"],
            budget_tokens=budget,
            system_preamble=SCENARIO["preamble"],
            render="structured",
        )
        assert default.items[1].fidelity is Fidelity.FULL and default.tokens_used <= budget
