"""What to do when the CRITICAL messages at Full do not fit the budget (``AFMConfig.overflow``).

A classifier makes mistakes, and in a long chat every false CRITICAL reserved at Full raises the
floor until the budget cannot hold it. Refusing the whole context then loses everything, the true
constraints included. Under ``overflow="degrade"`` the floor is lowered in three steps, each taken
only as far as needed and each recorded per message:

1. **consolidate**: a constraint restated later (cosine of the two messages at least
   ``consolidate_similarity``) is sent once: the newest wording Full, the older as a reference line;
2. **constraint sentences**: a long CRITICAL message is sent as the sentences that carry its
   constraint, verbatim, with the rest compressed (its ``constraints`` form, made at ingest);
3. **demote**: the least certain model-labelled CRITICALs (lowest classifier probability, older
   first) are scored as RELEVANT.

Messages CRITICAL by the user's word (a tag, or an explicit importance) are pinned: never touched.
Only when the pinned messages alone cannot fit is ``BudgetTooSmall`` raised, naming the minimum.
Spare budget later restores degraded constraints first (``core.packing``), so a step that turned out
unnecessary after all costs nothing. Pure arithmetic on arrays; the caller renders the forms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .packing import NO_FORM
from .types import COMPRESSED, FULL, PLACEHOLDER


@dataclass(frozen=True, slots=True)
class Degraded:
    """The overflow decisions: who is still reserved, in which floor form, at which costs, and why."""

    reserved: np.ndarray  # bool
    floor: np.ndarray  # int8 form codes
    costs: np.ndarray  # int64 (n, 3)
    demoted: np.ndarray  # indices now scored as RELEVANT
    references: dict[int, int] = field(default_factory=dict)  # older restatement -> the message sent Full
    constraint_forms: frozenset[int] = frozenset()  # sent as their constraint sentences when compressed
    reasons: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Constraints:
    """What overflow needs to know about the CRITICAL messages of one history."""

    pinned: np.ndarray  # bool, CRITICAL by the user's word
    confidence: np.ndarray  # float, the classifier's probability of CRITICAL (1.0 where pinned)
    constraint_cost: np.ndarray  # int64, cost of the constraint-sentences form, NO_FORM where none
    reference_cost: np.ndarray  # int64, cost of a one-line reference to a later restatement
    vectors: np.ndarray  # float32 (n, d) unit embeddings


def pinned_minimum(reserved: np.ndarray, costs: np.ndarray, pinned: np.ndarray) -> int:
    """Tokens the pinned constraints need at Full: the one floor overflow never lowers."""
    return int(costs[reserved & pinned, FULL].sum())


def degrade(reserved: np.ndarray, costs: np.ndarray, c: Constraints, available: int, threshold: float) -> Degraded:
    """Lower the reserved floor (``reserved`` at Full, ``costs`` per form) until it fits ``available``.

    The caller checks ``pinned_minimum`` first; here the floor always ends at or below ``available``.
    """
    original = costs
    reserved, costs = reserved.copy(), costs.copy()
    floor = np.full(len(reserved), FULL, dtype=np.int8)
    reasons: dict[int, str] = {}
    excess = int(costs[reserved, FULL].sum()) - available
    references = _consolidate(reserved, c, threshold) if excess > 0 else {}
    for older, newer in references.items():
        costs[older, PLACEHOLDER] = min(int(c.reference_cost[older]), int(costs[older, FULL]))
        costs[older, COMPRESSED] = NO_FORM  # a paraphrase of a constraint is never sent
        floor[older] = PLACEHOLDER
        excess -= int(costs[older, FULL] - costs[older, PLACEHOLDER])
        reasons[older] = f"critical, restated in turn {newer + 1}: sent once, as a reference"
    constraint_forms: set[int] = set()
    if excess > 0:
        excess = _constraint_forms(reserved, costs, floor, c, excess, constraint_forms, reasons)
    demoted = np.zeros(0, dtype=np.int64)
    if excess > 0:
        demoted = _demote(reserved, costs, floor, c, excess)
        costs[demoted] = original[demoted]  # a demoted message is an ordinary one again, every form allowed
        for i in demoted:
            references.pop(int(i), None)
            constraint_forms.discard(int(i))
            reasons[int(i)] = f"demoted: least certain CRITICAL (p={c.confidence[i]:.2f}) to fit the budget"
    return Degraded(reserved, floor, costs, demoted, references, frozenset(constraint_forms), reasons)


def _consolidate(reserved: np.ndarray, c: Constraints, threshold: float) -> dict[int, int]:
    """Each unpinned CRITICAL message that a later CRITICAL one restates -> the newest restatement."""
    idx = np.flatnonzero(reserved)
    if len(idx) < 2:
        return {}
    sims = c.vectors[idx] @ c.vectors[idx].T
    later = np.triu(sims >= threshold, k=1)  # later[a, b]: b is after a and restates it
    out: dict[int, int] = {}
    for a in np.flatnonzero(later.any(axis=1) & ~c.pinned[idx]):
        out[int(idx[a])] = int(idx[np.flatnonzero(later[a])[-1]])
    return out


def _constraint_forms(reserved: np.ndarray, costs: np.ndarray, floor: np.ndarray, c: Constraints, excess: int,
                      chosen: set[int], reasons: dict[int, str]) -> int:
    """Send the long constraints with the largest saving as their constraint sentences, until the floor fits."""
    saving = np.where(reserved & ~c.pinned & (floor == FULL) & (c.constraint_cost < costs[:, FULL]),
                      costs[:, FULL] - c.constraint_cost, 0)
    order = np.flatnonzero(saving > 0)
    order = order[np.argsort(-saving[order], kind="stable")]
    k = int(np.searchsorted(np.cumsum(saving[order]), excess, side="left")) + 1
    for i in order[:k]:
        costs[i, COMPRESSED] = c.constraint_cost[i]
        costs[i, PLACEHOLDER] = NO_FORM
        floor[i] = COMPRESSED
        chosen.add(int(i))
        reasons[int(i)] = "critical: its constraint sentences verbatim, the rest compressed"
        excess -= int(saving[i])
    return excess


def _demote(reserved: np.ndarray, costs: np.ndarray, floor: np.ndarray, c: Constraints, excess: int) -> np.ndarray:
    """Unreserve the least certain unpinned CRITICALs (older first on ties) until the floor fits."""
    candidates = np.flatnonzero(reserved & ~c.pinned)
    candidates = candidates[np.lexsort((candidates, c.confidence[candidates]))]
    freed = np.cumsum(costs[candidates, floor[candidates]])
    k = int(np.searchsorted(freed, excess, side="left")) + 1
    demoted = np.sort(candidates[:k])
    reserved[demoted] = False
    floor[demoted] = FULL
    return demoted
