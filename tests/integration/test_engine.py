"""FocusManager end to end on the real local components: tags, budgets, renders, caching."""

from __future__ import annotations

import json

import numpy as np
import pytest

from afm_local import AFMConfig, BudgetTooSmall, Fidelity, FocusManager, Importance, local_manager
from afm_local.engine.cache import ArtifactCache
from tests.support.real import example, shared_components

PEANUT = example("peanut_trip")


def manager(config: AFMConfig | None = None, **kwargs) -> FocusManager:
    return FocusManager(config, components=shared_components(), **kwargs)


def recount(ctx, config: AFMConfig) -> int:
    counter = shared_components().counter
    return sum(counter.count(m["content"]) + config.per_message_overhead for m in ctx.messages) + config.reply_overhead


def test_default_managers_share_one_set_of_models():
    """local_manager() builds the on-device stack once per process: two default managers share its ONNX
    sessions (and the engine itself builds nothing: it takes its components)."""
    first, second = local_manager(), local_manager(AFMConfig(half_life=6))
    assert first is not second and first.cache is not second.cache
    assert first.components is second.components is shared_components()
    assert first.components.embedder._session is second.components.embedder._session
    with pytest.raises(TypeError):
        FocusManager()  # type: ignore[call-arg]


def test_embedder_ranks_related_text_higher():
    vectors = shared_components().embedder.embed(
        ["I have a severe peanut allergy", "I can't eat nuts", "Which hotel in Bangkok is near the river?"]
    )
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.05  # e5 cosines sit in a narrow band


def test_embeddings_do_not_depend_on_the_batch():
    """A long message in a call must not change the vectors of the short ones (nor their order)."""
    embedder = shared_components().embedder
    texts = ["ok", "Мы летим в Стамбул в мае. " * 40, "I have a severe peanut allergy", ""]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert together.shape == (4, 384)
    assert np.allclose(together, alone, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_tags_set_importance_and_are_not_sent():
    fm = manager()
    crit = fm.add_message("user", "[!] Only window seats, please.")
    triv = fm.add_message("user", "[TRIVIAL] My allergy to peanuts is severe.")
    rel = fm.add_message("user", "  [critical] Budget around 300k.")
    assert (crit.importance, crit.importance_source, crit.content) == (
        Importance.CRITICAL,
        "tag",
        "Only window seats, please.",
    )
    assert triv.importance is Importance.TRIVIAL  # the user's word beats the rules
    assert rel.importance is Importance.CRITICAL and rel.content == "Budget around 300k."
    override = fm.add_message("user", "[!] tagged", importance="trivial")
    assert override.importance is Importance.TRIVIAL
    ctx = fm.build_context("Where should I sit?", 400)
    assert all("[!]" not in m["content"] and "[critical]" not in m["content"] for m in ctx.messages)


@pytest.mark.parametrize("budget", [300, 500, 800])
def test_peanut_allergy_is_full_and_first_in_structured_render(budget):
    fm = manager()
    fm.add_messages(PEANUT["messages"])
    ctx = fm.build_context(PEANUT["query"], budget, PEANUT["preamble"], render="structured")
    allergy = PEANUT["messages"][1]["content"]
    assert ctx.items[1].importance is Importance.CRITICAL
    assert ctx.items[1].fidelity is Fidelity.FULL
    system = ctx.messages[0]["content"]
    critical_block = system.split("### CRITICAL", 1)[1].split("###", 1)[0]
    assert allergy in critical_block
    assert system.index(allergy) < system.find("### RELEVANT") if "### RELEVANT" in system else True
    assert ctx.messages[-1] == {"role": "user", "content": PEANUT["query"]}
    assert ctx.tokens_used <= budget
    assert ctx.tokens_used == recount(ctx, fm.config)


def minimum_budget(fm: FocusManager, **kwargs) -> int:
    """The tightest budget that holds every CRITICAL message whole (the paper's floor)."""
    with pytest.raises(BudgetTooSmall) as err:
        fm.build_context(PEANUT["query"], 1, PEANUT["preamble"], overflow="raise", **kwargs)
    return err.value.minimum


@pytest.mark.parametrize("extra", [0, 60, 400])
def test_chat_render_counts_everything_sent(extra):
    fm = manager()
    fm.add_messages(PEANUT["messages"])
    budget = minimum_budget(fm) + extra  # from the tightest budget the constraints allow
    ctx = fm.build_context(PEANUT["query"], budget, PEANUT["preamble"])
    assert ctx.messages[0] == {"role": "system", "content": PEANUT["preamble"]}
    assert ctx.messages[-1]["content"] == PEANUT["query"]
    assert ctx.tokens_used == recount(ctx, fm.config) <= budget
    assert len(ctx.items) == len(PEANUT["messages"])
    sent = len(ctx.messages) - 2  # a run of messages left out is one line, carried by its first item
    assert sent == sum(it.fidelity is not Fidelity.DROPPED and it.text != "" for it in ctx.items)
    assert all(
        it.text or it.reason.startswith("placeholder: turns") for it in ctx.items if it.fidelity is not Fidelity.DROPPED
    )


def test_budget_too_small_names_the_minimum_when_overflow_raises():
    fm = manager(AFMConfig(overflow="raise"))
    fm.add_messages(PEANUT["messages"])
    with pytest.raises(BudgetTooSmall) as err:
        fm.build_context(PEANUT["query"], 40, PEANUT["preamble"])
    minimum = err.value.minimum
    assert f"minimum budget is {minimum} tokens" in str(err.value)
    ctx = fm.build_context(PEANUT["query"], minimum, PEANUT["preamble"])  # the named minimum works
    assert ctx.items[1].fidelity is Fidelity.FULL and ctx.tokens_used <= minimum


def test_by_default_only_tagged_constraints_can_refuse_a_context():
    fm = manager()
    fm.add_messages(PEANUT["messages"])
    ctx = fm.build_context(PEANUT["query"], 60, PEANUT["preamble"])  # the model's CRITICALs give way
    assert ctx.tokens_used <= 60
    assert all(item.reason for item in ctx.items)
    assert any(item.reason.startswith("demoted") for item in ctx.items)
    tagged = manager()
    tagged.add_messages([{**m, "importance": "CRITICAL"} if i == 1 else m for i, m in enumerate(PEANUT["messages"])])
    with pytest.raises(BudgetTooSmall, match="tagged") as err:
        tagged.build_context(PEANUT["query"], 40, PEANUT["preamble"])
    ctx = tagged.build_context(PEANUT["query"], err.value.minimum, PEANUT["preamble"])
    assert ctx.items[1].fidelity is Fidelity.FULL and ctx.items[1].reason == "critical: sent whole"


@pytest.mark.parametrize("bad", [0, -5, 2.5, True])
def test_bad_budgets_are_rejected(bad):
    with pytest.raises(ValueError, match="positive integer"):
        manager().build_context("hi", bad)


def test_unknown_role_is_rejected():
    with pytest.raises(ValueError, match="unknown role"):
        manager().add_message("narrator", "Once upon a time")


def test_russian_conversation_gets_a_russian_structured_memory():
    data = example("marketplace_300k")
    fm = manager()
    fm.add_messages(data["messages"])
    ctx = fm.build_context(data["query"], 400, data["preamble"], render="structured")
    assert ctx.language == "ru"
    assert "### КРИТИЧНО" in ctx.messages[0]["content"]
    assert data["messages"][1]["content"] in ctx.messages[0]["content"]
    assert ctx.tokens_used <= 400


class CountingEmbedder:
    """The real embedder, counting how many texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.calls = inner, inner.name, inner.dim, 0

    def embed(self, texts, kind="passage"):
        self.calls += len(texts)
        return self.inner.embed(texts, kind)

    def embed_sentences(self, texts, spans):
        self.calls += len(texts)
        return self.inner.embed_sentences(texts, spans)


def test_artifacts_are_computed_once_and_build_costs_one_query_embedding():
    from dataclasses import replace

    counting = CountingEmbedder(shared_components().embedder)
    comps = replace(shared_components(), embedder=counting)
    cache = ArtifactCache()
    fm = FocusManager(components=comps, cache=cache)
    fm.add_messages(PEANUT["messages"])
    assert counting.calls == len({m["content"] for m in PEANUT["messages"]})
    before = counting.calls
    fm.build_context("What should I eat?", 500)
    assert counting.calls == before + 1
    fm.build_context("What should I eat?", 300)
    assert counting.calls == before + 1  # the query embedding is cached too
    again = FocusManager(components=comps, cache=cache)  # same texts in another session: all cached
    again.add_messages(PEANUT["messages"])
    assert counting.calls == before + 1


def test_paper_packing_and_afm_packing_differ_on_a_late_constraint():
    filler = [
        {
            "role": "user",
            "content": (
                f"Tell me about the history of temple number {i} in Bangkok and its architecture, "
                "festivals and opening hours."
            ),
        }
        for i in range(30)
    ]
    late = {"role": "user", "content": "I am allergic to shellfish, so no shrimp or crab ever."}
    history = filler + [late] + filler[:3]
    afm, paper = manager(), manager(AFMConfig(packing="paper"))
    afm.add_messages(history)
    paper.add_messages(history)
    query = "Tell me about the history of temples in Bangkok and their festivals"
    a = afm.build_context(query, 400)
    p = paper.build_context(query, 400)
    assert a.items[30].fidelity is Fidelity.FULL
    assert p.items[30].fidelity is not Fidelity.FULL


HARD = ("Never touch the production database; staging only.", "Our budget is strictly 300k, not a dollar more.")
TASTES = [
    "I love spicy Thai curries.",
    "I prefer window seats on long flights.",
    "I can't stand horror movies.",
    "I'm a big fan of jazz, especially Coltrane.",
    "I always drink my coffee black.",
    "I hate crowded beaches.",
    "I prefer hiking to cycling.",
    "I really dislike cilantro.",
    "I only read science fiction.",
    "I love cats more than dogs.",
    "I prefer trains over buses.",
    "I don't like loud bars.",
    "My favourite colour is green.",
    "I prefer early mornings for workouts.",
    "I always use dark mode.",
]


@pytest.mark.parametrize("render", ["chat", "structured"])
@pytest.mark.parametrize("budget", [150, 200, 300])
def test_untagged_hard_constraints_survive_the_smallest_budgets_among_many_tastes(render, budget):
    """Issue 35: stated tastes that the classifier also calls CRITICAL crowd the reservation; the untagged hard
    constraints (no [!]) still reach the model verbatim, in either render, while tastes give way."""
    fm = manager()
    turns = [{"role": "user", "content": "We're migrating the billing service to the new cluster this week."}]
    turns += [{"role": "user", "content": t} for t in TASTES[:8]]
    turns += [
        {"role": "user", "content": HARD[0]},
        {"role": "assistant", "content": "Understood: I'll only use staging and leave production alone."},
    ]
    turns += [{"role": "user", "content": t} for t in TASTES[8:]] + [{"role": "user", "content": HARD[1]}]
    turns += [
        {"role": "user", "content": "How big is the invoices table?"},
        {"role": "assistant", "content": "About 40 million rows, roughly 18 GB with indexes."},
    ]
    fm.add_messages(turns)
    ctx = fm.build_context("Write the SQL to add the new index and run it.", budget, render=render)
    sent = json.dumps(ctx.messages)
    assert ctx.tokens_used <= budget and all(json.dumps(h)[1:-1] in sent for h in HARD)
    assert sum(json.dumps(t)[1:-1] in sent for t in TASTES) < len(TASTES) or budget == 300
