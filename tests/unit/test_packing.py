"""Packing as properties: the array packer gives exactly the reference packer's forms, never goes over
budget, keeps every message accounted for in order, keeps reserved messages at their lowest fidelity or better,
and with ``spend="budget"`` sends a history that fits whole, whole."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from afm_local import Fidelity
from afm_local.core.packing import (
    FIDELITIES,
    NEVER_FITS,
    WALK_BLOCK,
    PackPlan,
    pack,
    smallest_step,
    without_placeholders,
)
from tests.support import reference_packing as ref

SHAPES = (Fidelity.FULL, Fidelity.COMPRESSED, Fidelity.PLACEHOLDER)


@st.composite
def items(draw):
    reserved = draw(st.booleans()) and draw(st.booleans())
    full = draw(st.integers(1, 200))
    costs = {Fidelity.FULL: full}
    if draw(st.integers(0, 9)):
        costs[Fidelity.COMPRESSED] = draw(st.integers(1, full))
    if draw(st.integers(0, 9)):
        costs[Fidelity.PLACEHOLDER] = draw(st.integers(1, 15))
    lowest = Fidelity.FULL
    if reserved:
        lowest = draw(st.sampled_from([f for f in SHAPES if f in costs]))
    intended = Fidelity.FULL if reserved else draw(st.sampled_from(SHAPES))
    return ref.Item(reserved, draw(st.floats(0, 1)), intended, costs, lowest)


def plan_of(its: list[ref.Item]) -> PackPlan:
    costs = np.array([[it.costs.get(f, NEVER_FITS) for f in SHAPES] for it in its], dtype=np.int64).reshape(-1, 3)
    code = {f: i for i, f in enumerate(FIDELITIES)}
    return PackPlan.of(
        np.array([it.reserved for it in its], dtype=bool),
        np.array([it.score for it in its], dtype=np.float64),
        np.array([code[it.intended] for it in its], dtype=np.int8),
        costs,
        np.array([code[it.lowest] for it in its], dtype=np.int8),
    )


def forms(plan: PackPlan, available: int, **kw) -> list[Fidelity]:
    return [FIDELITIES[f] for f in pack(plan, available, **kw)]


OPTIONS = st.fixed_dictionaries(
    {
        "packing": st.sampled_from(["afm", "paper"]),
        "fill": st.sampled_from(["chronological", "score"]),
        "spend": st.sampled_from(["intended", "budget"]),
        "reserved_limit": st.one_of(st.none(), st.integers(0, 3000)),
        "reserve_placeholders": st.booleans(),
    }
)


@settings(max_examples=600, deadline=None)
@given(st.lists(items(), max_size=40), st.integers(0, 3000), OPTIONS)
def test_array_packer_matches_the_reference(its, available, options):
    plan = plan_of(its)
    try:
        expected = ref.pack(its, available, **options)
    except ValueError:
        with pytest.raises(ValueError):
            pack(plan, available, **options)
        return
    got = forms(plan, available, **options)
    assert got == expected
    assert sum(ref.cost(it, f) for it, f in zip(its, got)) <= available
    if options["packing"] == "afm":
        order = [*SHAPES, Fidelity.DROPPED]
        for it, f in zip(its, got):
            if it.reserved:
                assert order.index(f) <= order.index(ref.promote(it, it.lowest))


def random_items(seed: int, n: int) -> list[ref.Item]:
    """A long history drawn like ``items()``, from a seed: hypothesis would take long to build thousands."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        reserved = bool(rng.random() < 0.05)
        full = int(rng.integers(1, 200))
        costs = {Fidelity.FULL: full}
        if rng.random() < 0.9:
            costs[Fidelity.COMPRESSED] = int(rng.integers(1, full + 1))
        if rng.random() < 0.9:
            costs[Fidelity.PLACEHOLDER] = int(rng.integers(1, 16))
        lowest = Fidelity(rng.choice([f.value for f in SHAPES if f in costs])) if reserved else Fidelity.FULL
        intended = Fidelity.FULL if reserved else SHAPES[int(rng.integers(0, 3))]
        out.append(ref.Item(reserved, float(rng.random()), intended, costs, lowest))
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(WALK_BLOCK, 3 * WALK_BLOCK), st.floats(0.05, 1.1), OPTIONS)
def test_long_histories_walked_in_blocks_match_the_reference(seed, n, share, options):
    """Upgrade passes walk long histories in blocks of WALK_BLOCK and stop early; the forms must not change.
    The budget is a share of the whole history's cost, so that passes reach past their first block."""
    its = random_items(seed, n)
    available = int(share * sum(it.costs[Fidelity.FULL] for it in its))
    try:
        expected = ref.pack(its, available, **options)
    except ValueError:
        return
    assert forms(plan_of(its), available, **options) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.integers(0, 300), st.just(int(NEVER_FITS))), min_size=4, max_size=4),
        min_size=1,
        max_size=20,
    )
)
def test_smallest_step_is_the_smallest_positive_gap_between_two_forms(rows):
    costs = np.array(rows, dtype=np.int64)
    expected = [
        min(
            (abs(a - b) for i, a in enumerate(r) for b in r[i + 1 :] if a < NEVER_FITS and b < NEVER_FITS and a != b),
            default=int(NEVER_FITS),
        )
        for r in rows
    ]
    assert smallest_step(costs).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(items(), max_size=40), st.integers(0, 3000))
def test_a_history_that_fits_whole_is_sent_whole(its, available):
    if sum(it.costs[Fidelity.FULL] for it in its) > available:
        return
    assert forms(plan_of(its), available, spend="budget") == [Fidelity.FULL] * len(its)


@settings(max_examples=200, deadline=None)
@given(st.lists(items(), max_size=40), st.integers(0, 3000), st.booleans())
def test_spending_the_budget_never_sends_less(its, available, reserve):
    plan = plan_of(its)
    if plan.reserved_cost() > available:
        return
    rank = {f: i for i, f in enumerate([*SHAPES, Fidelity.DROPPED])}
    intended = forms(plan, available, reserve_placeholders=reserve)
    spent = forms(plan, available, spend="budget", reserve_placeholders=reserve)
    gave_way = 0
    for it, a, b in zip(its, intended, spent):
        # a stub: a placeholder, or a message cheaper whole than its placeholder and so sent whole
        stub = (
            Fidelity.PLACEHOLDER in it.costs
            and a is not Fidelity.DROPPED
            and ref.cost(it, a) <= it.costs[Fidelity.PLACEHOLDER]
        )
        if reserve or it.reserved or (a is not Fidelity.DROPPED and not stub):
            assert rank[b] <= rank[a]  # nothing but a stub is ever sent less (and with the stubs reserved, nothing)
        elif rank[b] > rank[a]:
            gave_way += ref.cost(it, a)
    used = sum(ref.cost(it, f) for it, f in zip(its, spent))
    assert used >= sum(ref.cost(it, f) for it, f in zip(its, intended)) - gave_way


def crit(cost: int) -> ref.Item:
    return ref.Item(True, 1.0, Fidelity.FULL, {f: cost for f in SHAPES})


def rel(
    full: int, compressed: int, placeholder: int, intended: Fidelity = Fidelity.FULL, score: float = 0.5
) -> ref.Item:
    return ref.Item(
        False,
        score,
        intended,
        {Fidelity.FULL: full, Fidelity.COMPRESSED: compressed, Fidelity.PLACEHOLDER: placeholder},
    )


def test_late_critical_survives_where_the_paper_greedy_loses_it():
    its = [rel(100, 40, 10), rel(100, 40, 10), crit(50)]
    plan = plan_of(its)
    assert forms(plan, 150) == [Fidelity.COMPRESSED, Fidelity.COMPRESSED, Fidelity.FULL]
    assert forms(plan, 150, packing="paper")[2] is not Fidelity.FULL


def test_oldest_placeholders_are_dropped_when_even_the_reservation_overflows():
    plan = plan_of([rel(30, 20, 10), rel(30, 20, 10), rel(30, 20, 10), crit(20)])
    assert forms(plan, 40) == [Fidelity.DROPPED, Fidelity.PLACEHOLDER, Fidelity.PLACEHOLDER, Fidelity.FULL]
    assert forms(plan, 39) == [Fidelity.DROPPED, Fidelity.DROPPED, Fidelity.PLACEHOLDER, Fidelity.FULL]


def test_score_fill_gives_spare_budget_to_the_best_first():
    plan = plan_of([rel(50, 30, 5, score=0.1), rel(50, 30, 5, score=0.9)])
    assert forms(plan, 55, fill="chronological") == [Fidelity.FULL, Fidelity.PLACEHOLDER]
    assert forms(plan, 55, fill="score") == [Fidelity.PLACEHOLDER, Fidelity.FULL]


def test_spare_budget_upgrades_beyond_the_intended_form_best_score_first():
    plan = plan_of([rel(50, 20, 5, Fidelity.PLACEHOLDER, 0.1), rel(50, 20, 5, Fidelity.COMPRESSED, 0.3)])
    assert forms(plan, 100) == [Fidelity.PLACEHOLDER, Fidelity.COMPRESSED]
    assert forms(plan, 100, spend="budget") == [Fidelity.FULL, Fidelity.FULL]
    assert forms(plan, 60, spend="budget") == [Fidelity.PLACEHOLDER, Fidelity.FULL]


def test_a_degraded_constraint_is_restored_first_when_there_is_room():
    degraded = ref.Item(True, 1.0, Fidelity.FULL, {Fidelity.FULL: 60, Fidelity.COMPRESSED: 20}, Fidelity.COMPRESSED)
    plan = plan_of([degraded, rel(50, 20, 5)])
    assert plan.reserved_cost() == 20
    assert forms(plan, 70) == [Fidelity.FULL, Fidelity.PLACEHOLDER]
    assert forms(plan, 40) == [Fidelity.COMPRESSED, Fidelity.COMPRESSED]


def test_switched_off_forms_are_never_used():
    its = [
        ref.Item(False, 0.3, Fidelity.COMPRESSED, {Fidelity.FULL: 50, Fidelity.COMPRESSED: 20}),
        ref.Item(False, 0.1, Fidelity.PLACEHOLDER, {Fidelity.FULL: 50, Fidelity.COMPRESSED: 20}),
    ]
    assert forms(plan_of(its), 100) == [Fidelity.COMPRESSED, Fidelity.DROPPED]


def test_the_placeholder_cap_keeps_the_best_scored():
    plan = without_placeholders(plan_of([rel(50, 20, 5, score=0.9), rel(50, 20, 5, score=0.1), crit(10)]), 1)
    assert plan.costs[0, 2] == 5 and plan.costs[1, 2] >= NEVER_FITS and plan.costs[2, 2] == 10
