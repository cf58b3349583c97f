"""``build_context``: score the history against the query, pack it into the budget, render it.

Everything here is array arithmetic over a history ``Snapshot`` plus one query embedding: scores,
intended forms, per-form costs and the packing are computed for all messages at once, texts are
looked up only for the messages that are sent, and the per-message account (``Context.items``) is
made only when a caller reads it. When the constraints at Full do not fit, ``core.overflow`` lowers
the floor (``AFMConfig.overflow``). The structured render is recounted whole (its joins can cost a
token more than the parts) and tightened until it fits. Costs are counted through
``core.accounting``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, get_args

import numpy as np

from ..core.accounting import fixed_cost, item_overhead, sent_cost
from ..core.config import AFMConfig, Fill, Overflow, Packing, Render, Spend, check_budget
from ..core.errors import BudgetTooSmall, InvalidInput
from ..core.overflow import Constraints, Degraded, degrade, pinned_minimum
from ..core.packing import NO_FORM, PackPlan, pack, without_placeholders
from ..core.protocols import TokenCounter
from ..core.render import Packed, reference_line, render_chat, render_structured
from ..core.scoring import intended_forms, messages_ago, recency_weight, score_messages
from ..core.types import (
    COMPRESSED, CRITICAL, DROPPED, FORMS, FULL, IMPORTANCES, PLACEHOLDER, RELEVANT, Context, ContextItem,
)
from ..text.lexicon import language_of_counts, letter_counts
from .history import CONSTRAINTS, REFERENCE, Snapshot

FIT_ROUNDS = 4
CHOICES = {name: get_args(AFMConfig.model_fields[name].annotation)  # per-call options: the config's Literals
           for name in ("render", "packing", "fill", "spend", "overflow")}
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
    def of(cls, query: str, budget: object, preamble: str | None, cfg: AFMConfig, **options: str | None) -> "Request":
        if not isinstance(query, str):
            raise InvalidInput("the query must be a string")
        budget = check_budget(budget)
        chosen = {}
        for name, value in options.items():
            allowed = CHOICES[name]
            value = value or getattr(cfg, name)
            if value not in allowed:
                raise InvalidInput(f"unknown {name} {value!r}; expected {' or '.join(allowed)}")
            chosen[name] = value
        return cls(query, budget, preamble, **chosen)


@dataclass(frozen=True, slots=True)
class Scored:
    """Scores and intended forms of one history for one query (recomputed for demoted messages)."""

    classes: np.ndarray
    scores: np.ndarray
    intended: np.ndarray

    @classmethod
    def of(cls, classes: np.ndarray, similarity: np.ndarray, recency: np.ndarray, cfg: AFMConfig) -> "Scored":
        scores = score_messages(classes, similarity, recency, cfg)
        return cls(classes, scores, intended_forms(scores, classes, cfg))


@dataclass(frozen=True, slots=True)
class Floor:
    """The plan packing starts from, after any overflow decisions for the space available."""

    plan: PackPlan
    scored: Scored
    degraded: Degraded | None
    limit: int | None = None  # what reserved messages may take, restored constraints included


def build_context(snap: Snapshot, similarity: np.ndarray, req: Request, counter: TokenCounter,
                  cfg: AFMConfig) -> Context:
    """Pack ``snap`` (whose cosine to the query is ``similarity``) for ``req``."""
    recency = recency_weight(messages_ago(len(snap)), cfg.half_life)
    scored = Scored.of(snap.classes, similarity, recency, cfg)
    language = language_of_counts(*(snap.letters[-LANGUAGE_WINDOW:].sum(axis=0) + letter_counts(req.query)))
    per_item = item_overhead(req.render, cfg)
    costs = form_costs(snap.tokens, per_item, cfg)
    fixed = fixed_cost(counter, req.query, req.preamble, req.render, language, cfg)
    available = req.budget - fixed
    for _ in range(FIT_ROUNDS):
        floor = _floor(snap, scored, costs, similarity, recency, available, fixed, req, counter, cfg)
        forms = pack(floor.plan, available, packing=req.packing, fill=req.fill, spend=req.spend,
                     reserved_limit=floor.limit, reserve_placeholders=cfg.reserve_placeholders)
        texts = _texts(snap, forms, floor.degraded)
        classes, form_list = floor.scored.classes.tolist(), forms.tolist()
        packed = [Packed(snap.messages[i].role, IMPORTANCES[classes[i]], FORMS[form_list[i]], text)
                  for i, text in texts.items()]
        if req.render == "chat":  # every sent text is a form whose count is known: the sum is exact
            sent = render_chat(req.preamble, packed, req.query)
            used = fixed + int(floor.plan.cost_of(forms).sum())
        else:
            sent = render_structured(req.preamble, packed, req.query, language)
            used = sent_cost(counter, sent, cfg)
        if used <= req.budget:
            counts = np.bincount(forms, minlength=len(FORMS))
            return Context(sent, used, req.budget, req.render, req.packing, language,
                           {f.value: int(c) for f, c in zip(FORMS, counts)},
                           _items(snap, similarity, recency, floor, forms, texts, per_item))
        available -= used - req.budget
    raise BudgetTooSmall(req.budget, used)


def form_costs(tokens: np.ndarray, per_item: int, cfg: AFMConfig) -> np.ndarray:
    """Cost of each form per message, overhead included; ``NO_FORM`` for forms the config switches off."""
    costs = tokens[:, :PLACEHOLDER + 1] + per_item
    if not cfg.use_compression:
        costs[:, COMPRESSED] = NO_FORM
    if not cfg.use_placeholders:
        costs[:, PLACEHOLDER] = NO_FORM
    return costs


def _floor(snap: Snapshot, scored: Scored, costs: np.ndarray, similarity: np.ndarray, recency: np.ndarray,
           available: int, fixed: int, req: Request, counter: TokenCounter, cfg: AFMConfig) -> Floor:
    """The packing plan for ``available`` tokens; overflow decisions when the constraints do not fit."""
    reserved = scored.classes == CRITICAL
    plan = PackPlan.of(reserved, scored.scores, scored.intended, costs)
    if cfg.max_placeholders is not None:
        plan = without_placeholders(plan, cfg.max_placeholders)
    if req.overflow == "raise":
        if plan.minimum() > available:
            raise BudgetTooSmall(req.budget, fixed + plan.minimum())
        return Floor(plan, scored, None)
    pinned = pinned_minimum(reserved, plan.costs, snap.pinned)
    if pinned > available:
        raise BudgetTooSmall(req.budget, fixed + pinned, PINNED)
    limit = available if cfg.critical_share is None else max(pinned, int(available * cfg.critical_share))
    if plan.minimum() <= limit:
        return Floor(plan, scored, None, limit)
    constraints = Constraints(
        snap.pinned, snap.confidence, snap.tokens[:, CONSTRAINTS] + (costs[:, FULL] - snap.tokens[:, FULL]),
        snap.tokens[:, REFERENCE] + (costs[:, FULL] - snap.tokens[:, FULL]), snap.restated_by,
    )
    degraded = degrade(reserved, plan.costs[:, :DROPPED], constraints, limit)
    classes = np.where(degraded.demoted, RELEVANT, scored.classes).astype(np.int8)
    rescored = Scored.of(classes, similarity, recency, cfg)
    plan = PackPlan.of(degraded.reserved, rescored.scores, rescored.intended, degraded.costs, degraded.floor)
    if cfg.max_placeholders is not None:  # a demoted message competes for a placeholder like any other
        plan = without_placeholders(plan, cfg.max_placeholders)
    return Floor(plan, rescored, degraded, limit)


def _texts(snap: Snapshot, forms: np.ndarray, degraded: Degraded | None) -> dict[int, str]:
    """The text of every message that is sent, in the form packing chose, in chronological order."""
    out: dict[int, str] = {}
    constraint_form = degraded.constraint_form.tolist() if degraded is not None else None
    referenced = degraded.referenced.tolist() if degraded is not None else None
    form_list = forms.tolist()
    for i in np.flatnonzero(forms != DROPPED).tolist():
        m, form = snap.messages[i], form_list[i]
        if form == FULL:
            out[i] = m.content
        elif form == COMPRESSED:
            if constraint_form is not None and constraint_form[i]:
                out[i] = m.constraints
            else:
                out[i] = m.compressed.text if m.tokens_compressed < m.tokens_full else m.content
        elif referenced is not None and referenced[i] >= 0:
            out[i] = reference_line(m.index, m.role)
        else:
            out[i] = m.placeholder
    return out


def _items(snap: Snapshot, similarity: np.ndarray, recency: np.ndarray, floor: Floor, forms: np.ndarray,
           texts: dict[int, str], per_item: int) -> Callable[[], list[ContextItem]]:
    """The per-message account, made when a caller first reads ``Context.items``."""

    def make() -> list[ContextItem]:
        costs = floor.plan.cost_of(forms)
        items = []
        for i, m in enumerate(snap.messages):
            form, intended = int(forms[i]), int(floor.scored.intended[i])
            items.append(ContextItem(
                m.index, m.role, m.importance, float(floor.scored.scores[i]), float(similarity[i]), float(recency[i]),
                FORMS[intended], FORMS[form], 0 if form == DROPPED else int(costs[i]) - per_item, texts.get(i, ""),
                (floor.degraded.reason(i) if floor.degraded is not None else "")
                or _reason(bool(floor.plan.reserved[i]), intended, form, floor.plan.costs[i]),
            ))
        return items

    return make


def _reason(reserved: bool, intended: int, form: int, costs: np.ndarray) -> str:
    if reserved:
        return "critical: sent whole"
    if form == intended:
        return "as intended by its score"
    if form < intended:
        return f"spare budget: sent {FORMS[form].value}, above its intended {FORMS[intended].value}"
    if form == DROPPED and costs[PLACEHOLDER] >= NO_FORM:
        return "left out: no placeholder (placeholder cap or placeholders off) and no room for more"
    if form == DROPPED:
        return "left out: no room after the constraints and the better-scored messages"
    return f"budget: sent {FORMS[form].value} instead of {FORMS[intended].value}"
