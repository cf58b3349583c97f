"""What to do when the CRITICAL messages at Full do not fit the budget (``AFMConfig.overflow``).

A classifier makes mistakes, and in a long chat every false CRITICAL reserved at Full raises the
reserved cost until the budget cannot hold it. Refusing the whole context then loses everything, the
true constraints included. Under ``overflow="degrade"`` the reservation is lowered in three steps,
each taken only as far as needed and each recorded per message:

1. **consolidate**: a constraint restated later (cosine of the two messages at least
   ``consolidate_similarity``; found once, at ingest: ``restatements``) is sent once: the newest
   wording Full, the older as a reference line;
2. **constraint sentences**: a long CRITICAL message is sent as the sentences that carry its
   constraint, verbatim, with the rest compressed (its ``constraints`` text, made at ingest);
3. **demote**: the least certain model-labelled CRITICALs (lowest classifier probability, older
   first) are scored as RELEVANT.

Messages CRITICAL by the user's word (a tag, or an explicit importance) are pinned: never touched.
Only when the pinned messages alone cannot fit is ``BudgetTooSmall`` raised, naming the minimum.
Spare budget later restores degraded constraints first (``core.packing``), so a step that turned out
unnecessary after all costs nothing. Everything is array arithmetic: a turn's cost does not grow
with the number of constraints beyond a few vector operations; the caller renders the texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .packing import NEVER_FITS
from .vocabulary import COMPRESSED, FULL, PLACEHOLDER


@dataclass(frozen=True, slots=True)
class Constraints:
    """What overflow needs to know about the messages of one history, one row per message."""

    pinned: np.ndarray  # bool, CRITICAL by the user's word
    confidence: np.ndarray  # float, the classifier's probability of CRITICAL (1.0 where pinned)
    constraint_cost: np.ndarray  # int64, cost of the constraint sentences, NEVER_FITS where none
    reference_cost: np.ndarray  # int64, cost of a one-line reference to a later restatement
    restated_by: np.ndarray  # int64, the newest later CRITICAL message that restates this one, or -1
    order: np.ndarray | None = None  # demotion key, lowest first (core.relevance.demotion_order); None: certainty


@dataclass(frozen=True, slots=True)
class Degraded:
    """The overflow decisions, as arrays: who is still reserved, at which lowest fidelity, at which costs."""

    reserved: np.ndarray  # bool
    lowest: np.ndarray  # int8 fidelity codes
    costs: np.ndarray  # int64 (n, 3)
    referenced: np.ndarray  # int64: the restatement an older wording points to, or -1
    constraint_sentences: np.ndarray  # bool: its Compressed text is its constraint sentences
    demoted: np.ndarray  # bool: now scored as RELEVANT
    confidence: np.ndarray  # float, for the reasons
    by_relevance: bool = False  # demoted by certainty and relevance to the query together (Constraints.order)

    def reason(self, i: int) -> str:
        """Why message ``i`` left its Full reservation, or "" when overflow did not touch it."""
        if self.demoted[i] and self.by_relevance:
            return f"demoted: less certain (p={self.confidence[i]:.2f}) or less relevant to the query than those kept"
        if self.demoted[i]:
            return f"demoted: least certain CRITICAL (p={self.confidence[i]:.2f}) to fit the budget"
        if self.referenced[i] >= 0:
            return f"critical, restated in turn {self.referenced[i] + 1}: sent once, as a reference"
        if self.constraint_sentences[i]:
            return "critical: its constraint sentences verbatim, the rest compressed"
        return ""


def restatements(vectors: np.ndarray, critical: np.ndarray, threshold: float) -> np.ndarray:
    """For the newest row of ``vectors`` (a CRITICAL message), the earlier CRITICAL rows it restates
    (cosine at least ``threshold``): the ingest-time half of consolidation, one dot product per
    earlier constraint."""
    earlier = np.flatnonzero(critical[:-1])
    return earlier[vectors[earlier] @ vectors[-1] >= threshold]


def pinned_minimum(reserved: np.ndarray, costs: np.ndarray, pinned: np.ndarray) -> int:
    """Tokens the pinned constraints need at Full: the one reservation overflow never lowers."""
    return int(costs[reserved & pinned, FULL].sum())


def degrade(reserved: np.ndarray, costs: np.ndarray, c: Constraints, available: int) -> Degraded:
    """Lower the reservation (``reserved`` at Full, ``costs`` per fidelity) until it fits ``available``.

    The caller checks ``pinned_minimum`` first; here the reserved cost always ends at or below ``available``.
    """
    original = costs
    reserved, costs = reserved.copy(), costs.copy()
    n = len(reserved)
    lowest = np.full(n, FULL, dtype=np.int8)
    referenced = np.full(n, -1, dtype=np.int64)
    demoted = np.zeros(n, dtype=bool)
    target = np.where(c.restated_by >= 0, c.restated_by, 0)
    older = reserved & ~c.pinned & (c.restated_by >= 0) & reserved[target]
    referenced[older] = c.restated_by[older]
    costs[older, PLACEHOLDER] = np.minimum(c.reference_cost[older], costs[older, FULL])
    costs[older, COMPRESSED] = NEVER_FITS  # a paraphrase of a constraint is never sent
    lowest[older] = PLACEHOLDER
    excess = _reserved_cost(reserved, costs, lowest) - available
    constraint_sentences = np.zeros(n, dtype=bool)
    if excess > 0:
        excess = _use_constraint_sentences(reserved, costs, lowest, c, excess, constraint_sentences)
    while excess > 0:  # a demoted restatement takes its references back to Full, hence the loop
        step = _demote(reserved, costs, lowest, c, excess)
        if not len(step):
            break  # only pinned constraints are left: the caller made sure they fit
        demoted[step] = True
        costs[step], lowest[step], constraint_sentences[step], referenced[step] = original[step], FULL, False, -1
        orphans = np.flatnonzero((referenced >= 0) & ~reserved[np.maximum(referenced, 0)])
        costs[orphans], lowest[orphans], referenced[orphans] = original[orphans], FULL, -1
        excess = _reserved_cost(reserved, costs, lowest) - available
    return Degraded(
        reserved, lowest, costs, referenced, constraint_sentences, demoted, c.confidence, c.order is not None
    )


def _reserved_cost(reserved: np.ndarray, costs: np.ndarray, lowest: np.ndarray) -> int:
    rows = np.flatnonzero(reserved)
    return int(costs[rows, lowest[rows]].sum())


def _use_constraint_sentences(
    reserved: np.ndarray, costs: np.ndarray, lowest: np.ndarray, c: Constraints, excess: int, chosen: np.ndarray
) -> int:
    """Send the long constraints with the largest saving as their constraint sentences, until the reservation fits."""
    saving = np.where(
        reserved & ~c.pinned & (lowest == FULL) & (c.constraint_cost < costs[:, FULL]),
        costs[:, FULL] - c.constraint_cost,
        0,
    )
    order = np.flatnonzero(saving > 0)
    order = order[np.argsort(-saving[order], kind="stable")]
    k = int(np.searchsorted(np.cumsum(saving[order]), excess, side="left")) + 1
    take = order[:k]
    costs[take, COMPRESSED] = c.constraint_cost[take]
    costs[take, PLACEHOLDER] = NEVER_FITS
    lowest[take] = COMPRESSED
    chosen[take] = True
    return excess - int(saving[take].sum())


def _demote(reserved: np.ndarray, costs: np.ndarray, lowest: np.ndarray, c: Constraints, excess: int) -> np.ndarray:
    """Unreserve the least certain unpinned CRITICALs (older first on ties) until the reservation fits; with
    ``c.order``, the lowest by that key first (certainty and relevance to the query together)."""
    candidates = np.flatnonzero(reserved & ~c.pinned)
    key = c.confidence if c.order is None else c.order
    candidates = candidates[np.lexsort((candidates, key[candidates]))]
    freed = np.cumsum(costs[candidates, lowest[candidates]])
    k = int(np.searchsorted(freed, excess, side="left")) + 1
    demoted = np.sort(candidates[:k])
    reserved[demoted] = False
    return demoted
