"""AFM keeps the peanut allergy verbatim where naive replay loses it (real local components)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from afm_local import AFMConfig, FocusManager, local_components
from afm_local.baselines import naive_replay, recency_compression, stateless
from afm_local.types import Fidelity

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = json.loads((ROOT / "examples" / "peanut_trip.json").read_text(encoding="utf-8"))
ALLERGY = SCENARIO["messages"][1]["content"]


@pytest.fixture(scope="module")
def comps():
    return local_components(threads=1)


@pytest.fixture(scope="module")
def manager(comps):
    fm = FocusManager(AFMConfig(), components=comps)
    fm.add_messages(SCENARIO["messages"])
    return fm


def _sent_tokens(comps, messages, cfg=AFMConfig()):
    return sum(comps.counter.count(m["content"]) + cfg.per_message_overhead for m in messages) + cfg.reply_overhead


@pytest.mark.parametrize("budget", [300, 500, 800])
def test_afm_keeps_allergy_naive_replay_loses_it(comps, manager, budget):
    assert "allergy" in ALLERGY
    ctx = manager.build_context(
        current_query=SCENARIO["query"], budget_tokens=budget, system_preamble=SCENARIO["preamble"],
        render="structured", packing="afm",
    )
    assert ctx.tokens_used <= budget
    item = ctx.items[1]
    assert item.fidelity is Fidelity.FULL
    first = ctx.messages[0]
    assert first["role"] == "system"
    critical_block = first["content"].split("### CRITICAL", 1)[1].split("\n### ", 1)[0]
    assert ALLERGY in critical_block

    naive = naive_replay(SCENARIO["messages"], SCENARIO["query"], budget, counter=comps.counter,
                         preamble=SCENARIO["preamble"])
    assert naive.tokens_used <= budget
    assert naive.tokens_used == _sent_tokens(comps, naive.messages)
    everything = _sent_tokens(comps, [{"content": SCENARIO["preamble"]}, *SCENARIO["messages"], {"content": SCENARIO["query"]}])
    if everything <= budget:
        # The example chat is only ~710 tokens with preamble and query, so at 800 a sliding window
        # holds all of it, allergy included: there is nothing for any strategy to lose there.
        assert any(ALLERGY == m["content"] for m in naive.messages)
    else:
        assert not any("allergy" in m["content"] for m in naive.messages)


def test_whole_example_fits_800_so_naive_replay_only_loses_it_below(comps):
    """Documents the finding: the 800-token case is not a loss for naive replay on this example."""
    everything = _sent_tokens(comps, [{"content": SCENARIO["preamble"]}, *SCENARIO["messages"], {"content": SCENARIO["query"]}])
    assert 500 < everything <= 800


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
