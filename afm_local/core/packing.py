"""Budget packing: choose a form for every history message so the whole context fits.

Two policies, so they can be compared:

* ``paper``: the paper's greedy pass, oldest to newest. Each message takes its intended form or the
  next smaller one that still fits, and is dropped when none does. A CRITICAL message late in a long
  history can be squeezed out by earlier ones.
* ``afm`` (default): first reserve room for every CRITICAL message at Full and a placeholder for
  every other message; if even that floor does not fit, drop the oldest placeholders. Then spend
  what is left upgrading messages towards their intended form, oldest to newest (``fill=
  "chronological"``, the paper's order) or highest score first (``fill="score"``).

Costs are given per message and per form by the caller, already including chat overhead, so this
module is pure arithmetic and can be property-tested in isolation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .types import Fidelity, Importance

DOWNGRADES: dict[Fidelity, tuple[Fidelity, ...]] = {
    Fidelity.FULL: (Fidelity.FULL, Fidelity.COMPRESSED, Fidelity.PLACEHOLDER),
    Fidelity.COMPRESSED: (Fidelity.COMPRESSED, Fidelity.PLACEHOLDER),
    Fidelity.PLACEHOLDER: (Fidelity.PLACEHOLDER,),
}




@dataclass(frozen=True, slots=True)
class PackItem:
    """What packing needs to know about one message: its class, score, intended form and costs."""

    importance: Importance
    score: float
    intended: Fidelity
    costs: dict[Fidelity, int]  # forms that are switched off (ablations) are simply absent


def minimum_history_cost(items: Sequence[PackItem]) -> int:
    """Tokens that CRITICAL messages need at Full; nothing smaller is acceptable."""
    return sum(it.costs[Fidelity.FULL] for it in items if it.importance is Importance.CRITICAL)


def cap_placeholders(items: list[PackItem], cap: int) -> list[PackItem]:
    """``AFMConfig.max_placeholders``: only the ``cap`` highest-scoring non-CRITICAL messages (newer first
    on ties) keep a placeholder form; the rest lose it, so they reach the model Full or Compressed or not
    at all. Keeps the afm packer's placeholder floor within budget on very long histories, where it would
    otherwise drop the oldest messages outright, relevant or not."""
    ranked = sorted(
        (i for i, it in enumerate(items) if it.importance is not Importance.CRITICAL),
        key=lambda i: (-items[i].score, -i),
    )
    keep = set(ranked[:cap])
    out = []
    for i, it in enumerate(items):
        if it.importance is Importance.CRITICAL or i in keep or Fidelity.PLACEHOLDER not in it.costs:
            out.append(it)
        else:
            costs = {f: c for f, c in it.costs.items() if f is not Fidelity.PLACEHOLDER}
            out.append(PackItem(it.importance, it.score, it.intended, costs))
    return out


def pack(
    items: Sequence[PackItem],
    available: int,
    *,
    packing: str = "afm",
    fill: str = "chronological",
) -> list[Fidelity]:
    """Return one fidelity per item, in input (chronological) order, whose costs sum to ``available`` or less.

    Raises ``ValueError`` when ``available`` is below the CRITICAL floor; callers convert that into
    ``BudgetTooSmall`` with the full budget figures.
    """
    if minimum_history_cost(items) > available:
        raise ValueError("critical messages do not fit")
    if packing == "paper":
        return _pack_paper(items, available)
    if packing == "afm":
        return _pack_afm(items, available, fill)
    raise ValueError(f"unknown packing {packing!r}")


def _promote(it: PackItem, form: Fidelity) -> Fidelity:
    """The highest form that costs no more than ``form``: a tiny message is cheaper whole than as a stub."""
    for better in (Fidelity.FULL, Fidelity.COMPRESSED, Fidelity.PLACEHOLDER):
        if better in it.costs and it.costs[better] <= it.costs[form]:
            return better
    return form


def _forms(it: PackItem) -> list[Fidelity]:
    """The intended form and its downgrades, keeping only the forms this run allows (none: dropped)."""
    return [f for f in DOWNGRADES[it.intended] if f in it.costs]


def cost(it: PackItem, form: Fidelity) -> int:
    return 0 if form is Fidelity.DROPPED else it.costs[form]


def _pack_paper(items: Sequence[PackItem], available: int) -> list[Fidelity]:
    remaining = available
    out: list[Fidelity] = []
    for it in items:
        chosen = Fidelity.DROPPED
        for form in _forms(it):
            if it.costs[form] <= remaining:
                chosen = _promote(it, form)
                remaining -= it.costs[chosen]
                break
        out.append(chosen)
    return out


def _pack_afm(items: Sequence[PackItem], available: int, fill: str) -> list[Fidelity]:
    out = [
        Fidelity.FULL if it.importance is Importance.CRITICAL
        else _promote(it, Fidelity.PLACEHOLDER) if Fidelity.PLACEHOLDER in it.costs
        else Fidelity.DROPPED
        for it in items
    ]
    used = sum(cost(it, f) for it, f in zip(items, out))
    for i, it in enumerate(items):  # oldest placeholders go first when even the floor overflows
        if used <= available:
            break
        if it.importance is not Importance.CRITICAL:
            used -= cost(it, out[i])
            out[i] = Fidelity.DROPPED

    floor_dropped = {i for i, f in enumerate(out) if f is Fidelity.DROPPED and Fidelity.PLACEHOLDER in items[i].costs}
    order = [i for i, it in enumerate(items) if it.importance is not Importance.CRITICAL and i not in floor_dropped]
    if fill == "score":
        order.sort(key=lambda i: (-items[i].score, i))
    elif fill != "chronological":
        raise ValueError(f"unknown fill {fill!r}")
    spare = available - used
    for i in order:
        it = items[i]
        floor = cost(it, out[i])
        for form in _forms(it):
            form = _promote(it, form)
            extra = it.costs[form] - floor
            if extra <= 0:
                break  # already at this form or better
            if extra <= spare:
                out[i] = form
                spare -= extra
                break
    return out
