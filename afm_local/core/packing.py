"""Budget packing: choose a fidelity for every history message so the whole context fits.

Two policies, so they can be compared:

* ``paper``: the paper's greedy pass, oldest to newest. Each message takes its intended fidelity or the
  next smaller one that still fits, and is dropped when none does. A CRITICAL message late in a long
  history can be squeezed out by earlier ones.
* ``afm`` (default): first reserve every CRITICAL message at its lowest fidelity (Full, unless the
  overflow step chose a smaller one) and a placeholder for every other message; if even that
  reservation does not fit, drop the oldest placeholders. Then spend what is left upgrading messages towards
  their intended fidelity, oldest to newest (``fill="chronological"``, the paper's order) or highest
  score first (``fill="score"``).

Then, with ``spend="budget"``, tokens still spare upgrade messages *beyond* their intended fidelity,
best score first, up to Full: a history that fits whole is sent whole.

Everything is arrays, one row per message, so a turn costs array operations plus a Python step
only where a greedy pass meets a message whose first choice does not fit. Costs come from the
caller, per message and per fidelity, already including chat overhead; ``NEVER_FITS`` marks a fidelity that
is switched off. This module is pure arithmetic and is property-tested against a plain reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .vocabulary import COMPRESSED, DROPPED, FIDELITIES, FULL, PLACEHOLDER

__all__ = [
    "FIDELITIES",
    "NEVER_FITS",
    "WALK_BLOCK",
    "Chains",
    "PackPlan",
    "pack",
    "promoted",
    "smallest_step",
    "without_placeholders",
]

NEVER_FITS = np.int64(1) << 40  # the cost of a fidelity that is switched off: it never fits
WALK_BLOCK = 512  # positions of an upgrade walk handled by one set of array operations


@dataclass(frozen=True, slots=True)
class PackPlan:
    """What packing needs, one row per message in chronological order.

    ``costs[:, DROPPED]`` is 0. ``lowest`` is the fidelity a reserved message cannot go below.
    """

    reserved: np.ndarray  # bool: CRITICAL, kept at its lowest fidelity or better
    score: np.ndarray  # float64
    intended: np.ndarray  # int8 fidelity code (FULL for reserved messages)
    lowest: np.ndarray  # int8 fidelity code, meaningful where reserved
    costs: np.ndarray  # int64, shape (n, 4)
    promoted: np.ndarray = field(init=False)  # int8 (n, 4): ``promoted(costs)``, made once per plan
    step: np.ndarray = field(init=False)  # int64 (n,): ``smallest_step(costs)``, made once per plan

    def __post_init__(self) -> None:
        object.__setattr__(self, "promoted", promoted(self.costs))
        object.__setattr__(self, "step", smallest_step(self.costs))

    @classmethod
    def of(
        cls,
        reserved: np.ndarray,
        score: np.ndarray,
        intended: np.ndarray,
        costs: np.ndarray,
        lowest: np.ndarray | None = None,
    ) -> PackPlan:
        n = len(score)
        full = np.zeros((n, 4), dtype=np.int64)
        full[:, :3] = costs[:, :3]
        lowest = np.full(n, FULL, dtype=np.int8) if lowest is None else lowest.astype(np.int8)
        return cls(reserved.astype(bool), score.astype(np.float64), intended.astype(np.int8), lowest, full)

    def cost_of(self, fidelities: np.ndarray) -> np.ndarray:
        return self.costs[np.arange(len(fidelities)), fidelities]

    def reserved_cost(self) -> int:
        """Tokens the reserved messages need at their lowest fidelities; nothing smaller is acceptable."""
        lowest = self.promoted[np.arange(len(self.lowest)), self.lowest]
        return int(self.cost_of(lowest)[self.reserved].sum())


def without_placeholders(plan: PackPlan, cap: int) -> PackPlan:
    """``AFMConfig.max_placeholders``: only the ``cap`` highest-scoring non-reserved messages (newer first
    on ties) keep a placeholder fidelity; the rest lose it, so they reach the model Full or Compressed or not
    at all. Keeps the afm packer's reserved placeholders within budget on very long histories, where it would
    otherwise drop the oldest messages outright, relevant or not."""
    others = np.flatnonzero(~plan.reserved)
    ranked = others[np.lexsort((-others, -plan.score[others]))]
    costs = plan.costs.copy()
    costs[ranked[cap:], PLACEHOLDER] = NEVER_FITS
    return PackPlan(plan.reserved, plan.score, plan.intended, plan.lowest, costs)


def promoted(costs: np.ndarray) -> np.ndarray:
    """For each message and fidelity, the best fidelity that costs no more (a tiny message is cheaper whole
    than as a stub). Shape (n, 4); DROPPED stays DROPPED."""
    out = np.empty(costs.shape, dtype=np.int8)
    out[:, DROPPED] = DROPPED
    for fidelity in (FULL, COMPRESSED, PLACEHOLDER):
        best = np.full(len(costs), fidelity, dtype=np.int8)
        for better in (PLACEHOLDER, COMPRESSED, FULL):  # the last assignment wins: the best fidelity
            if better <= fidelity:
                best = np.where(costs[:, better] <= costs[:, fidelity], better, best).astype(np.int8)
        out[:, fidelity] = np.where(costs[:, fidelity] >= NEVER_FITS, fidelity, best)
    return out


def smallest_step(costs: np.ndarray) -> np.ndarray:
    """For each message, the smallest positive difference between the costs of two of its fidelities
    (dropped included, switched-off fidelities not): no upgrade of it can cost less, so a pass with less
    spare than that skips it without looking at its chain. Most passes late in a turn have a few
    tokens left and thousands of messages to walk."""
    on = costs < NEVER_FITS
    step = np.full(len(costs), NEVER_FITS, dtype=np.int64)
    for a in range(4):
        for b in range(a + 1, 4):
            gap = np.abs(costs[:, a] - costs[:, b])
            np.minimum(step, np.where(on[:, a] & on[:, b] & (gap > 0), gap, NEVER_FITS), out=step)
    return step


@dataclass(frozen=True, slots=True)
class Chains:
    """For every message, the fidelities an upgrade may try from a cap down to a lowest fidelity (promoted: a
    fidelity that costs no more than a worse one stands for it), and their costs: made once per pass kind,
    so a pass over thousands of messages is a few array operations."""

    caps: np.ndarray  # int8 (n,)
    fidelities: np.ndarray  # int8 (n, 3): the s-th fidelity from the cap down; -1 past the lowest
    costs: np.ndarray  # int64 (n, 3): their costs; NEVER_FITS past the lowest
    cheapest: np.ndarray = field(init=False)  # int64 (n,): the cheapest fidelity of each chain

    def __post_init__(self) -> None:
        object.__setattr__(self, "cheapest", self.costs.min(axis=1))

    @classmethod
    def of(cls, plan: PackPlan, caps: np.ndarray) -> Chains:
        """The chains from ``caps`` down to a placeholder: two gathers over the whole history."""
        steps = caps.astype(np.intp)[:, None] + np.arange(3)
        past = steps > PLACEHOLDER
        rows = np.arange(len(caps))[:, None]
        fidelities = plan.promoted[rows, np.minimum(steps, PLACEHOLDER)]
        costs = plan.costs[rows, fidelities]
        fidelities[past], costs[past] = -1, NEVER_FITS
        return cls(caps.astype(np.int8), fidelities, costs)

    def down_to(self, lowest: int) -> Chains:
        """The same chains, stopped at ``lowest`` (Compressed: no placeholder is tried)."""
        past = self.caps.astype(np.int64)[:, None] + np.arange(3) > lowest
        return Chains(
            self.caps, np.where(past, -1, self.fidelities).astype(np.int8), np.where(past, NEVER_FITS, self.costs)
        )


def pack(
    plan: PackPlan,
    available: int,
    *,
    packing: str = "afm",
    fill: str = "chronological",
    spend: str = "intended",
    reserved_limit: int | None = None,
    reserve_placeholders: bool = True,
) -> np.ndarray:
    """Return one fidelity code per message, in chronological order, whose costs sum to ``available`` or less.

    ``reserved_limit`` caps what the reserved messages may take when their degraded fidelities are restored;
    ``reserve_placeholders=False`` leaves the placeholders out of the afm reservation, so a placeholder is
    given in fill order like any other fidelity instead of before every better-scored message's fidelity.

    Raises ``ValueError`` when ``available`` is below the reserved cost; callers handle the overflow
    (``engine.build``) before packing, so this is a programming error there.
    """
    if plan.reserved_cost() > available:
        raise ValueError("reserved messages do not fit")
    if spend not in ("intended", "budget"):
        raise ValueError(f"unknown spend {spend!r}")
    if spend == "budget" and packing == "afm" and int(plan.costs[:, FULL].sum()) <= available:
        return np.full(len(plan.score), FULL, dtype=np.int8)  # the whole history fits: send it whole
    by_score = np.argsort(-plan.score, kind="stable")  # best first, older first on ties
    top = Chains.of(plan, np.full(len(plan.score), FULL, dtype=np.int8)) if spend == "budget" else None
    if packing == "paper":
        out, spare = _pack_paper(plan, available)
    elif packing == "afm":
        limit = available if reserved_limit is None else reserved_limit
        out, spare = _pack_afm(plan, available, fill, limit, reserve_placeholders, top, by_score)
    else:
        raise ValueError(f"unknown packing {packing!r}")
    if top is not None:  # spend="budget": what is still spare goes beyond intended fidelities, best score first
        _upgrade(plan, out, by_score, top, spare)
    return out


def _pack_afm(
    plan: PackPlan,
    available: int,
    fill: str,
    reserved_limit: int,
    reserve_placeholders: bool,
    top: Chains | None,
    by_score: np.ndarray,
) -> tuple[np.ndarray, int]:
    """``top``: the chains from Full down, when spare tokens may go beyond intended fidelities (spend="budget")."""
    n = len(plan.score)
    rows = np.arange(n)
    prom = plan.promoted
    placeholder_ok = (plan.costs[:, PLACEHOLDER] < NEVER_FITS) & reserve_placeholders
    out = np.where(placeholder_ok, prom[:, PLACEHOLDER], DROPPED).astype(np.int8)
    out[plan.reserved] = prom[rows, plan.lowest][plan.reserved]
    cost = plan.costs[rows, out]
    used = int(cost.sum())
    if used > available:  # oldest placeholders go first when even the reservation overflows
        others = np.flatnonzero(~plan.reserved & (out != DROPPED))
        freed = np.cumsum(cost[others])
        k = int(np.searchsorted(freed, used - available, side="left")) + 1
        out[others[:k]] = DROPPED
        used -= int(freed[min(k, len(freed)) - 1])
    eligible = ~plan.reserved & ~((out == DROPPED) & placeholder_ok)  # not reserved, not dropped from the reservation
    if fill == "chronological":
        others = np.flatnonzero(eligible)
    elif fill == "score":
        others = by_score[eligible[by_score]]
    else:
        raise ValueError(f"unknown fill {fill!r}")
    intended = Chains.of(plan, plan.intended)
    # degraded constraints are restored first, within what reserved messages may take; then the rest in fill order
    restore = np.flatnonzero(plan.reserved & (out != prom[:, FULL]))
    spare = available - used
    allowance = min(spare, reserved_limit - int(cost[plan.reserved].sum()))
    spare -= allowance - _upgrade(plan, out, restore, intended, allowance)
    if not reserve_placeholders:  # content before stubs: Full and Compressed fidelities first, upgraded with spare
        content = others[plan.intended[others] <= COMPRESSED]  # a message meant as a stub waits for the stubs
        spare = _upgrade(plan, out, content, intended.down_to(COMPRESSED), spare)
        if top is not None:  # spare reaches more messages (their cheapest text) before it deepens any
            breadth = Chains.of(plan, np.full(len(out), COMPRESSED, dtype=np.int8)).down_to(COMPRESSED)
            spare = _upgrade(plan, out, by_score, breadth, spare)
            spare = _upgrade(plan, out, by_score, top.down_to(COMPRESSED), spare)
    spare = _upgrade(plan, out, others, intended, spare)
    return out, spare


def _pack_paper(plan: PackPlan, available: int) -> tuple[np.ndarray, int]:
    out = np.full(len(plan.score), DROPPED, dtype=np.int8)
    spare = _upgrade(plan, out, np.arange(len(out)), Chains.of(plan, plan.intended), available)
    return out, spare


def _upgrade(plan: PackPlan, out: np.ndarray, order: np.ndarray, chains: Chains, spare: int) -> int:
    """Walk ``order``; give each message the first fidelity of its chain (``chains``: its cap down to the
    lowest fidelity) whose cost is above its current one and fits ``spare``. Updates ``out``; returns the spare.

    The walk goes in blocks of ``WALK_BLOCK`` positions and stops once no message left in the order has
    an upgrade as small as the spare (``PackPlan.step``): late passes of a turn often have a few tokens
    for thousands of messages. Each message's choice depends only on the spare when it is reached, so
    the blocks give the same result as one walk.
    """
    if spare <= 0:
        return spare
    order = order[(plan.step[order] <= spare) & (out[order] > chains.caps[order])]  # else nothing it can do
    current = plan.costs[order, out[order]]  # stays true for a message until the walk reaches it
    fits = chains.cheapest[order] <= current + spare  # a fidelity of its chain fits
    order, current = order[fits], current[fits]
    if not len(order):
        return spare
    smallest_after = np.minimum.accumulate(plan.step[order][::-1])[::-1]
    for start in range(0, len(order), WALK_BLOCK):
        if smallest_after[start] > spare:
            break
        block = slice(start, start + WALK_BLOCK)
        spare = _walk(out, order[block], current[block], chains, spare)
    return spare


def _walk(out: np.ndarray, order: np.ndarray, current: np.ndarray, chains: Chains, spare: int) -> int:
    """One block of ``_upgrade``'s walk (``current``: the cost of each message's fidelity before it).

    A run of messages whose first choice fits is taken in one cumulative sum; only a message whose first
    choice does not fit is looked at in Python, and messages that no longer fit anything are pruned.
    """
    fits = chains.cheapest[order] <= current + spare  # the spare has shrunk since the order was filtered
    order, current = order[fits], current[fits]
    # everything below is in walk positions: row order[p] of the history is position p
    chain = chains.fidelities[order]
    extras = chains.costs[order] - current[:, None]
    extras[chain < 0] = NEVER_FITS
    # the chain stops at the first fidelity that is no upgrade (extra <= 0)
    stops = np.cumsum(extras <= 0, axis=1) > 0
    first = np.where(stops[:, 0], 0, extras[:, 0])
    need = np.where(stops, NEVER_FITS, extras).min(axis=1)
    chosen = np.full(len(order), -1, dtype=np.int8)
    rest = np.flatnonzero(need <= spare)
    while len(rest):
        run = np.cumsum(first[rest])
        k = int(np.searchsorted(run, spare, side="right"))
        taken = rest[:k][first[rest[:k]] > 0]
        chosen[taken] = chain[taken, 0]
        spare -= int(run[k - 1]) if k else 0
        if k == len(rest):
            break
        p = int(rest[k])
        for step in (1, 2):
            if stops[p, step]:
                break
            if extras[p, step] <= spare:
                chosen[p] = chain[p, step]
                spare -= int(extras[p, step])
                break
        rest = rest[k + 1 :]
        rest = rest[need[rest] <= spare]
    upgraded = chosen >= 0
    out[order[upgraded]] = chosen[upgraded]
    return spare
