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

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.accounting import sent_cost
from ..core.config import AFMConfig
from ..core.errors import BudgetTooSmall
from ..core.forms import AttachmentForm, attachment_account, image_parts, image_price
from ..core.overflow import Constraints, Degraded, degrade, pinned_minimum
from ..core.packing import NEVER_FITS, PackPlan, pack, without_placeholders
from ..core.protocols import TokenCounter
from ..core.relevance import (
    demotion_order,
)
from ..core.render import (
    Packed,
    chat_messages,
    reference_line,
    render_chat,
    render_structured,
)
from ..core.turns import Turn
from ..core.types import Context, ContextItem, Message
from ..core.vocabulary import COMPRESSED, CRITICAL, DROPPED, FIDELITIES, FULL, IMPORTANCES, PLACEHOLDER, RELEVANT
from .history import CONSTRAINTS, REFERENCE, Snapshot
from .job import Job, Plan, Request, make_job
from .lines import Line, cover, line_reserve, range_lines, unnamed

FIT_ROUNDS = 4
PINNED = "every message tagged [!] or marked CRITICAL"


def build_context(
    snap: Snapshot, query_vector: np.ndarray, req: Request, counter: TokenCounter, cfg: AFMConfig
) -> Context:
    """Pack ``snap`` for ``req``, whose query embeds as ``query_vector``."""
    job = make_job(snap, query_vector, req, counter, cfg)
    available, extra = req.budget - job.fixed, 0
    for _ in range(FIT_ROUNDS):
        attempt = _attempt(job, available, extra)
        if attempt.used > req.budget:
            available -= attempt.used - req.budget
        elif attempt.unnamed and extra + attempt.unnamed <= available // 2:
            extra += attempt.unnamed  # a loop step left out with no line to say so: set room aside, pack again
        else:
            return attempt.context(job)
    if attempt.used <= req.budget:
        return attempt.context(job)
    raise BudgetTooSmall(req.budget, attempt.used)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One packing of a job for the space available: what it sends and what that costs, and the tokens the
    loop's unnamed runs of left-out steps would need for their lines."""

    plan: Plan
    fidelities: np.ndarray
    texts: dict[int, str]
    lines: dict[int, Line]
    sent: list[dict[str, Any]]
    query_index: int
    used: int
    unnamed: int

    def context(self, job: Job) -> Context:
        covered = cover(self.fidelities, self.lines)
        counts = np.bincount(covered, minlength=len(FIDELITIES))
        req = job.req
        return Context(
            self.sent,
            self.used,
            req.budget,
            req.render,
            req.packing,
            job.language,
            {f.value: int(c) for f, c in zip(FIDELITIES, counts)},
            self.query_index,
            _items(job, self.plan, covered, self.texts, self.lines),
        )


def _attempt(job: Job, available: int, extra: int) -> Attempt:
    """Pack, name the runs left out, render and count, with ``extra`` tokens set aside for the loop's lines."""
    req, cfg = job.req, job.cfg
    reserve = line_reserve(job, available) + extra
    plan = _plan(job, available - reserve)
    fidelities = pack(
        plan.pack_plan,
        available - reserve,
        packing=req.packing,
        fill=req.fill,
        spend=req.spend,
        reserved_limit=plan.limit,
        reserve_placeholders=cfg.reserve_placeholders,
    )
    used = job.fixed + int(plan.pack_plan.cost_of(fidelities).sum())
    lines = range_lines(job, plan, fidelities, req.budget - used) if cfg.placeholders == "range" else {}
    texts = _texts(job, fidelities, plan.degraded)
    packed = _packed(job, plan, fidelities, texts, lines)
    before, loop = _at_query(job, packed)
    if req.render == "chat":  # every sent text, image and line has a known count: the sum is exact
        sent = render_chat(req.preamble, before, req.query)
        used += sum(line.cost for line in lines.values())
    else:
        sent = render_structured(req.preamble, before, req.query, job.language)
    query_index = len(sent) - 1
    sent += chat_messages(loop)
    if req.render == "structured":
        used = sent_cost(job.counter, sent, cfg, image_price(image for p in packed for image in p.images))
    return Attempt(plan, fidelities, texts, lines, sent, query_index, used, unnamed(job, fidelities, lines))


def _at_query(job: Job, packed: list[Packed]) -> tuple[list[Packed], list[Packed]]:
    """The packed history split where the query stands: what is sent before it, and the loop sent after it."""
    if not job.req.loop:
        return packed, []
    k = bisect_left([p.index for p in packed], job.req.split_at(len(job.snap)))
    return packed[:k], packed[k:]


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
    by_relevance = cfg.demote == "relevance" and cfg.scoring == "relevance"
    constraints = Constraints(
        snap.pinned,
        snap.confidence,
        snap.tokens[:, CONSTRAINTS] + overhead,
        snap.tokens[:, REFERENCE] + overhead,
        snap.restated_by,
        demotion_order(scored.z, snap.confidence) if by_relevance else None,
    )
    degraded = degrade(reserved, pack_plan.costs[:, :DROPPED], constraints, limit)
    rescored = scored.reclassed(np.where(degraded.demoted, RELEVANT, scored.classes).astype(np.int8), cfg)
    pack_plan = PackPlan.of(degraded.reserved, rescored.scores, rescored.intended, degraded.costs, degraded.lowest)
    if cfg.max_placeholders is not None:  # a demoted message competes for a placeholder like any other
        pack_plan = without_placeholders(pack_plan, cfg.max_placeholders)
    return Plan(pack_plan, rescored, degraded, limit)


def _texts(job: Job, fidelities: np.ndarray, degraded: Degraded | None) -> dict[int, str]:
    """The text of every message that is sent, at the fidelity packing chose, in chronological order."""
    out: dict[int, str] = {}
    snap = job.snap
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
                out[i] = _compressed(job, i)
        elif referenced is not None and referenced[i] >= 0:
            out[i] = reference_line(m.index, m.role)
        else:
            out[i] = m.placeholder
    return out


def _compressed(job: Job, i: int) -> str:
    """Message ``i``'s compressed text: its query-aware excerpt or its summary (a tool-call unit's compressed
    form), when either is shorter."""
    m = job.snap.messages[i]
    sentences = m.sentences if m.excerptable else None
    if job.excerpts is not None and sentences is not None:
        excerpt = job.costs[i, COMPRESSED] < job.costs[i, FULL]
        sentence = int(job.excerpts[i] - job.snap.sentences.starts[i])
        return sentences.text(m.content, sentence) if excerpt else m.content
    return m.compressed.text if m.tokens_compressed < m.tokens_full else m.content


def _packed(
    job: Job, plan: Plan, fidelities: np.ndarray, texts: dict[int, str], lines: dict[int, Line]
) -> list[Packed]:
    """The packed history to render: content and lines in order, with a unit's API messages and the image
    parts each message's form sends."""
    snap, classes, degraded = job.snap, plan.scored.classes.tolist(), plan.degraded
    packed = []
    for i in sorted(texts.keys() | lines.keys()):
        fidelity, text = (PLACEHOLDER, lines[i].text) if i in lines else (int(fidelities[i]), texts[i])
        m = snap.messages[i]
        images = image_parts(m.attachments, _form(m, i, fidelity, degraded)) if m.attachments else ()
        packed.append(
            Packed(
                m.role, IMPORTANCES[classes[i]], FIDELITIES[fidelity], text, unit_turns(m, fidelity, text), images, i
            )
        )
    return packed


def unit_turns(m: Message, fidelity: int, text: str) -> tuple[Turn, ...]:
    """The API messages a tool-call unit is sent as: whole at Full, its compressed form at Compressed (the
    text ``_texts`` chose says which); none for a placeholder or a reference line, which are one line."""
    if m.unit is None or fidelity not in (FULL, COMPRESSED):
        return ()
    return m.unit.full.turns if fidelity == FULL or text == m.content else m.unit.compressed.turns


def _form(m: Message, i: int, fidelity: int, degraded: Degraded | None) -> AttachmentForm:
    """What a message's attachments travel as (``core.parts.image_parts``): a compressed form that saves
    nothing is sent Full, and the constraint sentences carry no image."""
    if fidelity == COMPRESSED and degraded is not None and degraded.constraint_sentences[i]:
        return "constraints"
    if fidelity == COMPRESSED and m.tokens_compressed >= m.tokens_full:
        return "full"
    return FIDELITIES[fidelity].value


def _items(
    job: Job, plan: Plan, fidelities: np.ndarray, texts: dict[int, str], lines: dict[int, Line]
) -> Callable[[], list[ContextItem]]:
    """The per-message account, made when a caller first reads ``Context.items``."""

    def make() -> list[ContextItem]:
        costs, scored, degraded = plan.pack_plan.cost_of(fidelities), plan.scored, plan.degraded
        run_of = {i: (start, line) for start, line in lines.items() for i in range(start, line.end)}
        items = []
        for i, m in enumerate(job.snap.messages):
            fidelity, intended = int(fidelities[i]), int(scored.intended[i])
            tokens, text = (0 if fidelity == DROPPED else int(costs[i]) - job.per_item), texts.get(i, "")
            reason = degraded.reason(i) if degraded is not None else ""
            if i in run_of:
                start, line = run_of[i]
                tokens, text = (line.cost - job.per_item, line.text) if i == start else (0, "")
                reason = reason or f"placeholder: turns {start + 1}–{line.end} left out, named in one line"
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
                    tokens,
                    text,
                    reason,
                    m.unit.full.tools if m.unit is not None else (),
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
        return "left out: no room after the constraints and the better-scored messages, and no placeholder"
    if fidelity == DROPPED:
        return "left out: no room after the constraints and the better-scored messages"
    return f"budget: sent {FIDELITIES[fidelity].value} instead of {FIDELITIES[intended].value}"
