"""A straightforward, loop-per-message packer: the specification that ``afm_local.core.packing`` must
reproduce exactly with array operations. Kept in the tests on purpose, so it stays simple."""

from __future__ import annotations

from dataclasses import dataclass

from afm_local.core.vocabulary import Fidelity

ORDER = (Fidelity.FULL, Fidelity.COMPRESSED, Fidelity.PLACEHOLDER)


@dataclass
class Item:
    reserved: bool
    score: float
    intended: Fidelity
    costs: dict[Fidelity, int]  # switched-off fidelities are absent
    lowest: Fidelity = Fidelity.FULL


def cost(it: Item, fidelity: Fidelity) -> int:
    return 0 if fidelity is Fidelity.DROPPED else it.costs[fidelity]


def promote(it: Item, fidelity: Fidelity) -> Fidelity:
    """The best allowed fidelity that costs no more than ``fidelity``."""
    if fidelity not in it.costs:
        return fidelity
    for better in ORDER:
        if better in it.costs and it.costs[better] <= it.costs[fidelity]:
            return better
    return fidelity


def chain(cap: Fidelity, lowest: Fidelity = Fidelity.PLACEHOLDER) -> list[Fidelity]:
    return list(ORDER[ORDER.index(cap) : ORDER.index(lowest) + 1])


def upgrade(
    items: list[Item],
    out: list[Fidelity],
    order: list[int],
    caps: list[Fidelity],
    spare: int,
    lowest: Fidelity = Fidelity.PLACEHOLDER,
) -> int:
    for i in order:
        it = items[i]
        for fidelity in chain(caps[i], lowest):
            if fidelity not in it.costs:
                continue
            fidelity = promote(it, fidelity)
            extra = it.costs[fidelity] - cost(it, out[i])
            if extra <= 0:
                break
            if extra <= spare:
                out[i] = fidelity
                spare -= extra
                break
    return spare


def pack(
    items: list[Item],
    available: int,
    packing: str = "afm",
    fill: str = "chronological",
    spend: str = "intended",
    reserved_limit: int | None = None,
    reserve_placeholders: bool = True,
) -> list[Fidelity]:
    if sum(cost(it, promote(it, it.lowest)) for it in items if it.reserved) > available:
        raise ValueError("reserved messages do not fit")
    if spend == "budget" and packing == "afm" and sum(it.costs[Fidelity.FULL] for it in items) <= available:
        return [Fidelity.FULL] * len(items)
    if packing == "paper":
        out = [Fidelity.DROPPED] * len(items)
        spare = upgrade(items, out, list(range(len(items))), [it.intended for it in items], available)
    else:
        out = []
        for it in items:
            if it.reserved:
                out.append(promote(it, it.lowest))
            elif reserve_placeholders and Fidelity.PLACEHOLDER in it.costs:
                out.append(promote(it, Fidelity.PLACEHOLDER))
            else:
                out.append(Fidelity.DROPPED)
        used = sum(cost(it, f) for it, f in zip(items, out))
        for i, it in enumerate(items):
            if used <= available:
                break
            if not it.reserved and out[i] is not Fidelity.DROPPED:
                used -= cost(it, out[i])
                out[i] = Fidelity.DROPPED
        dropped_from_reservation = {
            i
            for i, it in enumerate(items)
            if reserve_placeholders
            and out[i] is Fidelity.DROPPED
            and Fidelity.PLACEHOLDER in it.costs
            and not it.reserved
        }
        others = [i for i, it in enumerate(items) if not it.reserved and i not in dropped_from_reservation]
        if fill == "score":
            others.sort(key=lambda i: (-items[i].score, i))
        restore = [i for i, it in enumerate(items) if it.reserved and out[i] is not promote(it, Fidelity.FULL)]
        caps = [it.intended for it in items]
        limit = available if reserved_limit is None else reserved_limit
        reserved_used = sum(cost(it, f) for it, f in zip(items, out) if it.reserved)
        allowance = min(available - used, limit - reserved_used)
        spare = available - used - allowance + upgrade(items, out, restore, caps, allowance)
        if not reserve_placeholders:  # content first, then stubs
            spare = upgrade(items, out, others, caps, spare, Fidelity.COMPRESSED)
            if spend == "budget":  # breadth (every message's text, best first), then depth (up to Full)
                best = sorted(range(len(items)), key=lambda i: (-items[i].score, i))
                spare = upgrade(items, out, best, [Fidelity.COMPRESSED] * len(items), spare, Fidelity.COMPRESSED)
                spare = upgrade(items, out, best, [Fidelity.FULL] * len(items), spare, Fidelity.COMPRESSED)
        spare = upgrade(items, out, others, caps, spare)
    if spend == "budget" and spare > 0:
        order = sorted(range(len(items)), key=lambda i: (-items[i].score, i))
        upgrade(items, out, order, [Fidelity.FULL] * len(items), spare)
    return out
