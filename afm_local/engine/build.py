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
from ..core.forms import Form, attachment_account, image_parts, image_price
from ..core.overflow import Constraints, Degraded, degrade, pinned_minimum
from ..core.packing import NEVER_FITS, PackPlan, pack, without_placeholders
from ..core.protocols import TokenCounter
from ..core.ranges import choose, runs
from ..core.relevance import best_sentences, demotion_order, excerpt_costs, relevance_scores, relevance_z
from ..core.render import Packed, range_placeholder, reference_line, render_chat, render_structured
from ..core.scoring import intended_fidelities, messages_ago, recency_weight, score_messages
from ..core.turns import Turn
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
RANGE_EXTRA = 4  # a range line may run this many tokens over placeholder_max_tokens: it names turns A–B
MIN_LINE_TOKENS = 5  # no placeholder line is shorter: a run is not tried with less spare than this (+ overhead)


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
    z: np.ndarray  # scoring="relevance": how far above the history's mean each message stands (core.relevance)
    scores: np.ndarray
    intended: np.ndarray

    @classmethod
    def of(
        cls, classes: np.ndarray, similarity: np.ndarray, recency: np.ndarray, z: np.ndarray, cfg: AFMConfig
    ) -> Scored:
        if cfg.scoring == "paper":
            scores = score_messages(classes, similarity, recency, cfg)
        else:
            scores = relevance_scores(classes, z, cfg)
        return cls(classes, similarity, recency, z, scores, intended_fidelities(scores, classes, cfg))

    def reclassed(self, classes: np.ndarray, cfg: AFMConfig) -> Scored:
        return Scored.of(classes, self.similarity, self.recency, self.z, cfg)


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
    excerpts: np.ndarray | None  # compressed_form="excerpt": each message's best sentence (an index of snap.sentences)
    counter: TokenCounter
    language: str


@dataclass(frozen=True, slots=True)
class Plan:
    """What packing starts from for the space available, after any overflow decisions."""

    pack_plan: PackPlan
    scored: Scored
    degraded: Degraded | None
    limit: int | None = None  # what reserved messages may take, restored constraints included


def build_context(
    snap: Snapshot, query_vector: np.ndarray, req: Request, counter: TokenCounter, cfg: AFMConfig
) -> Context:
    """Pack ``snap`` for ``req``, whose query embeds as ``query_vector``."""
    job = _job(snap, query_vector, req, counter, cfg)
    available = req.budget - job.fixed
    for _ in range(FIT_ROUNDS):
        reserve = _line_reserve(job, available)
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
        lines = _range_lines(job, plan, fidelities, req.budget - used) if cfg.placeholders == "range" else {}
        texts = _texts(job, fidelities, plan.degraded)
        packed = _packed(job, plan, fidelities, texts, lines)
        if req.render == "chat":  # every sent text, image and line has a known count: the sum is exact
            sent = render_chat(req.preamble, packed, req.query)
            used += sum(line.cost for line in lines.values())
        else:
            sent = render_structured(req.preamble, packed, req.query, job.language)
            used = sent_cost(counter, sent, cfg, image_price(image for p in packed for image in p.images))
        if used <= req.budget:
            covered = _cover(fidelities, lines)
            counts = np.bincount(covered, minlength=len(FIDELITIES))
            return Context(
                sent,
                used,
                req.budget,
                req.render,
                req.packing,
                job.language,
                {f.value: int(c) for f, c in zip(FIDELITIES, counts)},
                _items(job, plan, covered, texts, lines),
            )
        available -= used - req.budget
    raise BudgetTooSmall(req.budget, used)


def _line_reserve(job: Job, available: int) -> int:
    """``placeholders="range"``: the tokens set aside for range lines, a share of what the CRITICAL messages
    leave (so the reservation never decides whether constraints fit); none when the whole history fits."""
    if job.cfg.placeholders == "message" or int(job.costs[:, FULL].sum()) <= available:
        return 0
    critical = int(job.costs[job.scored.classes == CRITICAL, FULL].sum())
    return int(job.cfg.placeholder_share * max(0, available - critical))


def _job(snap: Snapshot, query_vector: np.ndarray, req: Request, counter: TokenCounter, cfg: AFMConfig) -> Job:
    """Everything one call packs from: scores (the config's scoring), per-fidelity costs, the fixed cost."""
    n = len(snap)
    recency = recency_weight(messages_ago(n), cfg.half_life)
    query_vector = np.asarray(query_vector, dtype=np.float32)
    dense = (snap.vectors @ query_vector).astype(np.float64)
    z, excerpts, excerpt_tokens = np.zeros(n), None, None
    if cfg.scoring == "relevance" or cfg.compressed_form == "excerpt":
        sentences = snap.sentences
        best, best_sim = best_sentences(sentences.vectors @ query_vector, sentences.starts, sentences.owners)
        if cfg.scoring == "relevance":
            z = relevance_z(dense, best_sim, snap.lexical_scores(req.query), recency, cfg)
        if cfg.compressed_form == "excerpt":
            excerpts = best  # a message without sentences (a tool-call unit) keeps its own compressed form
            excerpt = excerpt_costs(
                best, sentences.starts, sentences.tokens, snap.tokens[:, FULL], cfg.excerpt_min_saving
            )
            excerpt_tokens = np.where(snap.excerptable, excerpt, snap.tokens[:, COMPRESSED])
    language = language_of_counts(*(snap.letters[-LANGUAGE_WINDOW:].sum(axis=0) + letter_counts(req.query)))
    per_item = item_overhead(req.render, cfg)
    return Job(
        snap,
        Scored.of(snap.classes, dense, recency, z, cfg),
        fidelity_costs(snap.tokens, per_item, cfg, excerpt_tokens),
        fixed_cost(counter, req.query, req.preamble, req.render, language, cfg),
        per_item,
        req,
        cfg,
        excerpts,
        counter,
        language,
    )


def fidelity_costs(
    tokens: np.ndarray, per_item: int, cfg: AFMConfig, excerpt_tokens: np.ndarray | None = None
) -> np.ndarray:
    """Cost of each fidelity per message, overhead included; ``NEVER_FITS`` for those the config switches off
    (and for per-message placeholders when runs get one line each). ``excerpt_tokens``: the compressed
    fidelity is the query-aware excerpt."""
    costs = tokens[:, : PLACEHOLDER + 1] + per_item
    if excerpt_tokens is not None:
        costs[:, COMPRESSED] = excerpt_tokens + per_item
    if not cfg.use_compression:
        costs[:, COMPRESSED] = NEVER_FITS
    if not cfg.use_placeholders or cfg.placeholders == "range":
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


@dataclass(frozen=True, slots=True)
class Line:
    """One placeholder line for the run of messages from its start (the key it is stored under) to ``end``."""

    end: int
    text: str
    cost: int  # overhead included


def _range_lines(job: Job, plan: Plan, fidelities: np.ndarray, spare: int) -> dict[int, Line]:
    """``placeholders="range"``: one line for each run of messages left out, most relevant runs first, within
    ``spare`` tokens (``core.ranges``). A run of one message is named by its own placeholder."""
    scores, cfg = plan.scored.scores, job.cfg
    made: dict[tuple[int, int], Line] = {}

    def line(a: int, b: int) -> Line:
        m = job.snap.messages[a]
        if b - a == 1:
            return Line(b, m.placeholder, m.tokens_placeholder + job.per_item)
        topic = job.snap.messages[a + int(np.argmax(scores[a:b]))].topic
        text, tokens = range_placeholder(a, b - 1, topic, job.counter, cfg.placeholder_max_tokens + RANGE_EXTRA)
        return Line(b, text, tokens + job.per_item)

    def cost(a: int, b: int) -> int:
        made[(a, b)] = made.get((a, b)) or line(a, b)
        return made[(a, b)].cost

    chosen = choose(runs(fidelities != DROPPED), scores, cost, spare, floor=job.per_item + MIN_LINE_TOKENS)
    return {a: made[(a, b)] for a, b in chosen}


def _cover(fidelities: np.ndarray, lines: dict[int, Line]) -> np.ndarray:
    """The fidelities with every message of a run that got a line counted as a placeholder."""
    covered = fidelities.copy()
    for start, line in lines.items():
        covered[start : line.end] = PLACEHOLDER
    return covered


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
            Packed(m.role, IMPORTANCES[classes[i]], FIDELITIES[fidelity], text, unit_turns(m, fidelity, text), images)
        )
    return packed


def unit_turns(m: Message, fidelity: int, text: str) -> tuple[Turn, ...]:
    """The API messages a tool-call unit is sent as: whole at Full, its compressed form at Compressed (the
    text ``_texts`` chose says which); none for a placeholder or a reference line, which are one line."""
    if m.unit is None or fidelity not in (FULL, COMPRESSED):
        return ()
    return m.unit.full.turns if fidelity == FULL or text == m.content else m.unit.compressed.turns


def _form(m: Message, i: int, fidelity: int, degraded: Degraded | None) -> Form:
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
