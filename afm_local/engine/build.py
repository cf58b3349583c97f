"""``build_context``: score the history against the query, pack it into the budget, render it.

Everything here is arithmetic over the ingested artifacts plus one query embedding; the fit loop
recounts the structured memory whole (its joins can cost a token more than the parts) and tightens
until it fits. Costs are counted through ``afm_local.core.accounting``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.accounting import fixed_cost, item_overhead, sent_cost
from ..core.config import AFMConfig, Packing, Render, Fill
from ..core.errors import BudgetTooSmall, InvalidInput
from ..core.packing import PackItem, cap_placeholders, minimum_history_cost, pack
from ..core.protocols import TokenCounter
from ..core.render import Packed, render_chat, render_structured
from ..core.scoring import intended_fidelity, messages_ago, recency_weight, score_messages
from ..core.types import Context, ContextItem, Fidelity, Message
from ..text.lexicon import detect_language

FIT_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class Request:
    """One ``build_context`` call, validated."""

    query: str
    budget: int
    preamble: str | None
    render: Render
    packing: Packing
    fill: Fill

    @classmethod
    def of(cls, query: str, budget: object, preamble: str | None, render: str | None, packing: str | None,
           fill: str | None, cfg: AFMConfig) -> "Request":
        if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
            raise InvalidInput(f"budget_tokens must be a positive integer, got {budget!r}")
        render, packing, fill = render or cfg.render, packing or cfg.packing, fill or cfg.fill
        if render not in ("chat", "structured"):
            raise InvalidInput(f"unknown render {render!r}; expected chat or structured")
        if packing not in ("afm", "paper"):
            raise InvalidInput(f"unknown packing {packing!r}; expected afm or paper")
        if fill not in ("chronological", "score"):
            raise InvalidInput(f"unknown fill {fill!r}; expected chronological or score")
        return cls(query, budget, preamble, render, packing, fill)  # type: ignore[arg-type]


def build_context(messages: Sequence[Message], similarity: np.ndarray, req: Request, counter: TokenCounter,
                  cfg: AFMConfig) -> Context:
    """Pack ``messages`` (whose cosine to the query is ``similarity``) for ``req``."""
    recency = recency_weight(messages_ago(len(messages)), cfg.half_life)
    importance = [m.importance for m in messages]
    scores = score_messages(importance, similarity, recency, cfg)
    intended = [intended_fidelity(float(s), imp, cfg) for s, imp in zip(scores, importance)]
    language = detect_language(*(m.content for m in messages[-50:]), req.query)
    per_item = item_overhead(req.render, cfg)
    items = [PackItem(m.importance, float(s), f, _costs(m, per_item, cfg)) for m, s, f in zip(messages, scores, intended)]
    if cfg.max_placeholders is not None:
        items = cap_placeholders(items, cfg.max_placeholders)
    fixed = fixed_cost(counter, req.query, req.preamble, req.render, language, cfg)
    fidelities, packed, sent, used = _fit(messages, items, fixed, req, language, counter, cfg)
    context_items = [
        ContextItem(m.index, m.role, m.importance, float(s), float(sim), float(w), f, fid,
                    0 if fid is Fidelity.DROPPED else it.costs[fid] - per_item, p.text)
        for m, s, sim, w, f, fid, it, p in zip(messages, scores, similarity, recency, intended, fidelities, items, packed)
    ]
    return Context(sent, context_items, used, req.budget, req.render, req.packing, language)


def _fit(messages: Sequence[Message], items: list[PackItem], fixed: int, req: Request, language: str,
         counter: TokenCounter, cfg: AFMConfig) -> tuple[list[Fidelity], list[Packed], list[dict[str, str]], int]:
    """Pack, render and count until the rendered context fits the budget (or raise ``BudgetTooSmall``)."""
    minimum = fixed + minimum_history_cost(items)
    if minimum > req.budget:
        raise BudgetTooSmall(req.budget, minimum)
    available = req.budget - fixed
    for _ in range(FIT_ROUNDS):
        fidelities = pack(items, available, packing=req.packing, fill=req.fill)
        packed = [Packed(m.role, m.importance, fid, form_text(m, fid)) for m, fid in zip(messages, fidelities)]
        if req.render == "chat":  # every sent text is a form whose count is cached: the sum is exact
            sent = render_chat(req.preamble, packed, req.query)
            used = fixed + sum(it.costs[f] for it, f in zip(items, fidelities) if f is not Fidelity.DROPPED)
        else:
            sent = render_structured(req.preamble, packed, req.query, language)
            used = sent_cost(counter, sent, cfg)
        if used <= req.budget:
            return fidelities, packed, sent, used
        available -= used - req.budget
        if available < minimum_history_cost(items):
            raise BudgetTooSmall(req.budget, minimum + used - req.budget)
    raise BudgetTooSmall(req.budget, used)


def _costs(m: Message, per_item: int, cfg: AFMConfig) -> dict[Fidelity, int]:
    costs = {Fidelity.FULL: m.tokens_full + per_item}
    if cfg.use_compression:
        costs[Fidelity.COMPRESSED] = min(m.tokens_compressed, m.tokens_full) + per_item
    if cfg.use_placeholders:
        costs[Fidelity.PLACEHOLDER] = m.tokens_placeholder + per_item
    return costs


def form_text(message: Message, fidelity: Fidelity) -> str:
    if fidelity is Fidelity.FULL:
        return message.content
    if fidelity is Fidelity.COMPRESSED:
        return message.compressed.text if message.tokens_compressed < message.tokens_full else message.content
    if fidelity is Fidelity.PLACEHOLDER:
        return message.placeholder
    return ""
