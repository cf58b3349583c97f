"""``build_context``: score the history against the query, pack it into the budget, render it.

Everything here is array arithmetic over a history ``Snapshot`` plus one query embedding: scores,
intended fidelities, per-fidelity costs and the packing are computed for all messages at once, texts
are looked up only for the messages that are sent, and the per-message account (``Context.items``) is
made only when a caller reads it. When the constraints at Full do not fit, ``core.overflow`` lowers
the reservation (``AFMConfig.overflow``). The structured render is recounted whole (its joins can cost
a token more than the parts) and tightened until it fits. Costs are counted through
``core.accounting``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.accounting import fixed_cost, item_overhead, sent_cost
from ..core.config import CALL_OPTIONS, AFMConfig, Fill, Overflow, Packing, Render, Spend, check_budget
from ..core.errors import BudgetTooSmall, InvalidInput
from ..core.forms import Form, attachment_account, image_parts
from ..core.overflow import Constraints, Degraded, degrade, pinned_minimum
from ..core.packing import NEVER_FITS, PackPlan, pack, without_placeholders
from ..core.protocols import TokenCounter
from ..core.render import Packed, reference_line, render_chat, render_structured
from ..core.scoring import intended_fidelities, messages_ago, recency_weight, score_messages
from ..core.types import (
    COMPRESSED,
    CRITICAL,
    DROPPED,
    FIDELITIES,
    FULL,
    IMPORTANCES,
    PLACEHOLDER,
    RELEVANT,
    Context,
    ContextItem,
    Message,
)
from ..text.lexicon import language_of_counts, letter_counts
from .history import CONSTRAINTS, REFERENCE, Snapshot

FIT_ROUNDS = 4
LANGUAGE_WINDOW = 50  # the newest messages (and the query) decide the language of the structured memory
PINNED = "every message tagged [!] or marked CRITICAL"


@dataclass(frozen=True, slots=True)
class Request:
    """One ``build_context`` call, validated; options left out take the config's values."""

    query: str
    budget: int
    preamble: str | None
    render: Render
    packing: Packing
    fill: Fill
    spend: Spend
    overflow: Overflow

    @classmethod
    def of(cls, query: str, budget: object, preamble: str | None, cfg: AFMConfig, **options: str | None) -> Request:
        if not isinstance(query, str):
            raise InvalidInput("the query must be a string")
        budget = check_budget(budget)

        def chosen(name: str) -> Any:
            value = options.get(name) or getattr(cfg, name)
            if value not in CALL_OPTIONS[name]:
                raise InvalidInput(f"unknown {name} {value!r}; expected {' or '.join(CALL_OPTIONS[name])}")
            return value

        return cls(query, budget, preamble, **{name: chosen(name) for name in CALL_OPTIONS})


@dataclass(frozen=True, slots=True)
class Scored:
    """Scores and intended fidelities of one history for one query, with what they came from (the
    similarities and recency weights), so that demoted messages can be scored again."""

    classes: np.ndarray
    similarity: np.ndarray
    recency: np.ndarray
    scores: np.ndarray
    intended: np.ndarray

    @classmethod
    def of(cls, classes: np.ndarray, similarity: np.ndarray, recency: np.ndarray, cfg: AFMConfig) -> Scored:
        scores = score_messages(classes, similarity, recency, cfg)
        return cls(classes, similarity, recency, scores, intended_fidelities(scores, classes, cfg))

    def reclassed(self, classes: np.ndarray, cfg: AFMConfig) -> Scored:
        return Scored.of(classes, self.similarity, self.recency, cfg)


@dataclass(frozen=True, slots=True)
class Job:
    """What one ``build_context`` call packs: the history, its scores for the query, the cost of each
    fidelity per message (overhead included), and what every context costs before any history."""

    snap: Snapshot
    scored: Scored
    costs: np.ndarray
    fixed: int
    per_item: int
    req: Request
    cfg: AFMConfig


@dataclass(frozen=True, slots=True)
class Plan:
    """What packing starts from for the space available, after any overflow decisions."""

    pack_plan: PackPlan
    scored: Scored
    degraded: Degraded | None
    limit: int | None = None  # what reserved messages may take, restored constraints included


def build_context(
    snap: Snapshot, similarity: np.ndarray, req: Request, counter: TokenCounter, cfg: AFMConfig
) -> Context:
    """Pack ``snap`` (whose cosine to the query is ``similarity``) for ``req``."""
    recency = recency_weight(messages_ago(len(snap)), cfg.half_life)
    language = language_of_counts(*(snap.letters[-LANGUAGE_WINDOW:].sum(axis=0) + letter_counts(req.query)))
    per_item = item_overhead(req.render, cfg)
    fixed = fixed_cost(counter, req.query, req.preamble, req.render, language, cfg)
    job = Job(
        snap,
        Scored.of(snap.classes, similarity, recency, cfg),
        fidelity_costs(snap.tokens, per_item, cfg),
        fixed,
        per_item,
        req,
        cfg,
    )
    available = req.budget - fixed
    for _ in range(FIT_ROUNDS):
        plan = _plan(job, available)
        fidelities = pack(
            plan.pack_plan,
            available,
            packing=req.packing,
            fill=req.fill,
            spend=req.spend,
            reserved_limit=plan.limit,
            reserve_placeholders=cfg.reserve_placeholders,
        )
        texts = _texts(snap, fidelities, plan.degraded)
        classes, fidelity_list = plan.scored.classes.tolist(), fidelities.tolist()
        packed = [
            Packed(
                snap.messages[i].role,
                IMPORTANCES[classes[i]],
                FIDELITIES[fidelity_list[i]],
                text,
                image_parts(snap.messages[i].attachments, _form(snap.messages[i], i, fidelity_list[i], plan.degraded))
                if snap.messages[i].attachments
                else (),
            )
            for i, text in texts.items()
        ]
        if req.render == "chat":  # every sent text and image has a known cost: the sum is exact
            sent = render_chat(req.preamble, packed, req.query)
            used = fixed + int(plan.pack_plan.cost_of(fidelities).sum())
        else:
            sent = render_structured(req.preamble, packed, req.query, language)
            used = sent_cost(counter, sent, cfg, sum(image.tokens for p in packed for image in p.images))
        if used <= req.budget:
            counts = np.bincount(fidelities, minlength=len(FIDELITIES))
            return Context(
                sent,
                used,
                req.budget,
                req.render,
                req.packing,
                language,
                {f.value: int(c) for f, c in zip(FIDELITIES, counts)},
                _items(job, plan, fidelities, texts),
            )
        available -= used - req.budget
    raise BudgetTooSmall(req.budget, used)


def fidelity_costs(tokens: np.ndarray, per_item: int, cfg: AFMConfig) -> np.ndarray:
    """Cost of each fidelity per message, overhead included; ``NEVER_FITS`` for those the config switches off."""
    costs = tokens[:, : PLACEHOLDER + 1] + per_item
    if not cfg.use_compression:
        costs[:, COMPRESSED] = NEVER_FITS
    if not cfg.use_placeholders:
        costs[:, PLACEHOLDER] = NEVER_FITS
    return costs


def _plan(job: Job, available: int) -> Plan:
    """The packing plan for ``available`` tokens; overflow decisions when the constraints do not fit."""
    snap, scored, costs, req, cfg = job.snap, job.scored, job.costs, job.req, job.cfg
    reserved = scored.classes == CRITICAL
    pack_plan = PackPlan.of(reserved, scored.scores, scored.intended, costs)
    if cfg.max_placeholders is not None:
        pack_plan = without_placeholders(pack_plan, cfg.max_placeholders)
    if req.overflow == "raise":
        if pack_plan.reserved_cost() > available:
            raise BudgetTooSmall(req.budget, job.fixed + pack_plan.reserved_cost())
        return Plan(pack_plan, scored, None)
    pinned = pinned_minimum(reserved, pack_plan.costs, snap.pinned)
    if pinned > available:
        raise BudgetTooSmall(req.budget, job.fixed + pinned, PINNED)
    limit = available if cfg.critical_share is None else max(pinned, int(available * cfg.critical_share))
    if pack_plan.reserved_cost() <= limit:
        return Plan(pack_plan, scored, None, limit)
    overhead = costs[:, FULL] - snap.tokens[:, FULL]
    constraints = Constraints(
        snap.pinned,
        snap.confidence,
        snap.tokens[:, CONSTRAINTS] + overhead,
        snap.tokens[:, REFERENCE] + overhead,
        snap.restated_by,
    )
    degraded = degrade(reserved, pack_plan.costs[:, :DROPPED], constraints, limit)
    rescored = scored.reclassed(np.where(degraded.demoted, RELEVANT, scored.classes).astype(np.int8), cfg)
    pack_plan = PackPlan.of(degraded.reserved, rescored.scores, rescored.intended, degraded.costs, degraded.lowest)
    if cfg.max_placeholders is not None:  # a demoted message competes for a placeholder like any other
        pack_plan = without_placeholders(pack_plan, cfg.max_placeholders)
    return Plan(pack_plan, rescored, degraded, limit)


def _texts(snap: Snapshot, fidelities: np.ndarray, degraded: Degraded | None) -> dict[int, str]:
    """The text of every message that is sent, at the fidelity packing chose, in chronological order."""
    out: dict[int, str] = {}
    constraint_sentences = degraded.constraint_sentences.tolist() if degraded is not None else None
    referenced = degraded.referenced.tolist() if degraded is not None else None
    fidelity_list = fidelities.tolist()
    for i in np.flatnonzero(fidelities != DROPPED).tolist():
        m, fidelity = snap.messages[i], fidelity_list[i]
        if fidelity == FULL:
            out[i] = m.content
        elif fidelity == COMPRESSED:
            if constraint_sentences is not None and constraint_sentences[i]:
                out[i] = m.constraints
            else:
                out[i] = m.compressed.text if m.tokens_compressed < m.tokens_full else m.content
        elif referenced is not None and referenced[i] >= 0:
            out[i] = reference_line(m.index, m.role)
        else:
            out[i] = m.placeholder
    return out


def _form(m: Message, i: int, fidelity: int, degraded: Degraded | None) -> Form:
    """What a message's attachments travel as (``core.parts.image_parts``): a compressed form that saves
    nothing is sent Full, and the constraint sentences carry no image."""
    if fidelity == COMPRESSED and degraded is not None and degraded.constraint_sentences[i]:
        return "constraints"
    if fidelity == COMPRESSED and m.tokens_compressed >= m.tokens_full:
        return "full"
    return FIDELITIES[fidelity].value


def _items(job: Job, plan: Plan, fidelities: np.ndarray, texts: dict[int, str]) -> Callable[[], list[ContextItem]]:
    """The per-message account, made when a caller first reads ``Context.items``."""

    def make() -> list[ContextItem]:
        costs, scored, degraded = plan.pack_plan.cost_of(fidelities), plan.scored, plan.degraded
        items = []
        for i, m in enumerate(job.snap.messages):
            fidelity, intended = int(fidelities[i]), int(scored.intended[i])
            reason = degraded.reason(i) if degraded is not None else ""
            reason = reason or _reason(bool(plan.pack_plan.reserved[i]), intended, fidelity, plan.pack_plan.costs[i])
            account = attachment_account(m.attachments, _form(m, i, fidelity, degraded)) if m.attachments else ()
            if account:
                reason += " · " + "; ".join(str(a["reason"]) for a in account)
            items.append(
                ContextItem(
                    m.index,
                    m.role,
                    m.importance,
                    float(scored.scores[i]),
                    float(scored.similarity[i]),
                    float(scored.recency[i]),
                    FIDELITIES[intended],
                    FIDELITIES[fidelity],
                    0 if fidelity == DROPPED else int(costs[i]) - job.per_item,
                    texts.get(i, ""),
                    reason,
                    account,
                )
            )
        return items

    return make


def _reason(reserved: bool, intended: int, fidelity: int, costs: np.ndarray) -> str:
    if reserved:
        return "critical: sent whole"
    if fidelity == intended:
        return "as intended by its score"
    if fidelity < intended:
        return f"spare budget: sent {FIDELITIES[fidelity].value}, above its intended {FIDELITIES[intended].value}"
    if fidelity == DROPPED and costs[PLACEHOLDER] >= NEVER_FITS:
        return "left out: no placeholder (placeholder cap or placeholders off) and no room for more"
    if fidelity == DROPPED:
        return "left out: no room after the constraints and the better-scored messages"
    return f"budget: sent {FIDELITIES[fidelity].value} instead of {FIDELITIES[intended].value}"
