"""Packing invariants as properties: never over budget, order kept, every message accounted for,
CRITICAL Full whenever the budget can hold it; and the paper's greedy order for comparison."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from afm_local import Fidelity, Importance
from afm_local.core.packing import PackItem, minimum_history_cost, pack

FORMS = (Fidelity.FULL, Fidelity.COMPRESSED, Fidelity.PLACEHOLDER)


@st.composite
def pack_items(draw):
    importance = draw(st.sampled_from(list(Importance)))
    full = draw(st.integers(1, 200))
    compressed = draw(st.integers(1, full))
    placeholder = draw(st.integers(1, 15))
    intended = Fidelity.FULL if importance is Importance.CRITICAL else draw(st.sampled_from(FORMS))
    return PackItem(
        importance,
        draw(st.floats(0, 1)),
        intended,
        {Fidelity.FULL: full, Fidelity.COMPRESSED: compressed, Fidelity.PLACEHOLDER: placeholder},
    )


def used(items, fidelities):
    return sum(0 if f is Fidelity.DROPPED else it.costs[f] for it, f in zip(items, fidelities))


@settings(max_examples=300, deadline=None)
@given(st.lists(pack_items(), max_size=40), st.integers(0, 3000), st.sampled_from(["chronological", "score"]))
def test_afm_packing_invariants(items, available, fill):
    if minimum_history_cost(items) > available:
        with pytest.raises(ValueError):
            pack(items, available, fill=fill)
        return
    out = pack(items, available, fill=fill)
    assert len(out) == len(items)  # every message accounted for, in chronological order
    assert used(items, out) <= available
    for it, f in zip(items, out):
        if it.importance is Importance.CRITICAL:
            assert f is Fidelity.FULL
        else:  # never above what the score intended, unless the higher form costs no more than a stub
            order = [Fidelity.FULL, Fidelity.COMPRESSED, Fidelity.PLACEHOLDER, Fidelity.DROPPED]
            if order.index(f) < order.index(it.intended):
                assert it.costs[f] <= max(it.costs[it.intended], it.costs[Fidelity.PLACEHOLDER])


@settings(max_examples=200, deadline=None)
@given(st.lists(pack_items(), max_size=40), st.integers(0, 3000))
def test_drops_are_oldest_first(items, available):
    if minimum_history_cost(items) > available:
        return
    out = pack(items, available)
    dropped = [i for i, f in enumerate(out) if f is Fidelity.DROPPED]
    kept_non_critical = [
        i for i, (it, f) in enumerate(zip(items, out)) if f is not Fidelity.DROPPED and it.importance is not Importance.CRITICAL
    ]
    if dropped and kept_non_critical:
        assert max(dropped) < min(kept_non_critical)


@settings(max_examples=300, deadline=None)
@given(st.lists(pack_items(), max_size=40), st.integers(0, 3000))
def test_paper_packing_never_exceeds_budget(items, available):
    if minimum_history_cost(items) > available:
        return
    out = pack(items, available, packing="paper")
    assert len(out) == len(items)
    assert used(items, out) <= available


def crit(cost):
    return PackItem(Importance.CRITICAL, 1.0, Fidelity.FULL, {f: cost for f in FORMS})


def rel(full, compressed, placeholder, intended=Fidelity.FULL):
    costs = {Fidelity.FULL: full, Fidelity.COMPRESSED: compressed, Fidelity.PLACEHOLDER: placeholder}
    return PackItem(Importance.RELEVANT, 0.5, intended, costs)


def test_late_critical_survives_where_the_paper_greedy_loses_it():
    items = [rel(100, 40, 10), rel(100, 40, 10), crit(50)]
    assert pack(items, 150) == [Fidelity.COMPRESSED, Fidelity.COMPRESSED, Fidelity.FULL]
    assert pack(items, 150, packing="paper")[2] is not Fidelity.FULL


def test_oldest_placeholders_are_dropped_when_even_the_floor_overflows():
    items = [rel(30, 20, 10), rel(30, 20, 10), rel(30, 20, 10), crit(20)]
    assert pack(items, 40) == [Fidelity.DROPPED, Fidelity.PLACEHOLDER, Fidelity.PLACEHOLDER, Fidelity.FULL]
    assert pack(items, 39) == [Fidelity.DROPPED, Fidelity.DROPPED, Fidelity.PLACEHOLDER, Fidelity.FULL]


def test_score_fill_gives_spare_budget_to_the_best_first():
    low = PackItem(Importance.RELEVANT, 0.1, Fidelity.FULL, {Fidelity.FULL: 50, Fidelity.COMPRESSED: 30, Fidelity.PLACEHOLDER: 5})
    high = PackItem(Importance.RELEVANT, 0.9, Fidelity.FULL, {Fidelity.FULL: 50, Fidelity.COMPRESSED: 30, Fidelity.PLACEHOLDER: 5})
    assert pack([low, high], 55, fill="chronological") == [Fidelity.FULL, Fidelity.PLACEHOLDER]
    assert pack([low, high], 55, fill="score") == [Fidelity.PLACEHOLDER, Fidelity.FULL]


def test_switched_off_forms_are_never_used():
    items = [
        PackItem(Importance.RELEVANT, 0.3, Fidelity.COMPRESSED, {Fidelity.FULL: 50, Fidelity.COMPRESSED: 20}),
        PackItem(Importance.RELEVANT, 0.1, Fidelity.PLACEHOLDER, {Fidelity.FULL: 50, Fidelity.COMPRESSED: 20}),
    ]
    assert pack(items, 100) == [Fidelity.COMPRESSED, Fidelity.DROPPED]
