"""What one ``build_context`` call packs from: the validated request, the history's scores for its query
(``Scored``, with the floors that put a missed hard constraint and the agent's pending result first), the
cost of each fidelity per message and what every context costs before any history (``Job``), and what
packing starts from after any overflow decisions (``Plan``). ``make_job`` computes them once a call, as
array arithmetic over the history's snapshot (``engine.build`` packs and renders from them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.accounting import fixed_cost, item_overhead
from ..core.config import CALL_OPTIONS, AFMConfig, Fill, Overflow, Packing, Render, Spend, check_budget
from ..core.errors import InvalidInput
from ..core.overflow import Degraded
from ..core.packing import NEVER_FITS, PackPlan
from ..core.protocols import TokenCounter
from ..core.relevance import (
    best_sentences,
    excerpt_costs,
    relevance_scores,
    relevance_z,
)
from ..core.scoring import intended_fidelities, messages_ago, recency_weight, score_messages
from ..core.vocabulary import COMPRESSED, CRITICAL, FULL, PLACEHOLDER
from ..text.lexicon import language_of_counts, letter_counts
from .history import Snapshot

LANGUAGE_WINDOW = 50  # the newest messages (and the query) decide the language of the structured memory


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
    loop: int = 0  # the newest history entries that came after the query (an agent's tool loop), sent after it
    focus: str = ""  # what the history is scored against: the query, and with a loop the agent's latest action

    @classmethod
    def of(
        cls,
        query: str,
        budget: object,
        preamble: str | None,
        cfg: AFMConfig,
        loop: int = 0,
        focus: str | None = None,
        **options: str | None,
    ) -> Request:
        if not isinstance(query, str):
            raise InvalidInput("the query must be a string")
        budget = check_budget(budget)

        def chosen(name: str) -> Any:
            value = options.get(name) or getattr(cfg, name)
            if value not in CALL_OPTIONS[name]:
                raise InvalidInput(f"unknown {name} {value!r}; expected {' or '.join(CALL_OPTIONS[name])}")
            return value

        chosen_options = {name: chosen(name) for name in CALL_OPTIONS}
        return cls(query, budget, preamble, **chosen_options, loop=loop, focus=focus or query)

    def split_at(self, n: int) -> int:
        """Where the query stands among ``n`` history entries: the entries from here on are the loop."""
        return n - self.loop


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
    floor: np.ndarray | None  # the least each message scores (_floors), or None

    @classmethod
    def of(
        cls,
        classes: np.ndarray,
        similarity: np.ndarray,
        recency: np.ndarray,
        z: np.ndarray,
        cfg: AFMConfig,
        floor: np.ndarray | None = None,
    ) -> Scored:
        if cfg.scoring == "paper":
            scores = score_messages(classes, similarity, recency, cfg)
        else:
            scores = relevance_scores(classes, z, cfg)
        if floor is not None:
            scores = np.maximum(scores, floor)
        return cls(classes, similarity, recency, z, scores, intended_fidelities(scores, classes, cfg), floor)

    def reclassed(self, classes: np.ndarray, cfg: AFMConfig) -> Scored:
        return Scored.of(classes, self.similarity, self.recency, self.z, cfg, self.floor)


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


def make_job(snap: Snapshot, query_vector: np.ndarray, req: Request, counter: TokenCounter, cfg: AFMConfig) -> Job:
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
            z = relevance_z(dense, best_sim, snap.lexical_scores(req.focus), recency, cfg)
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
        Scored.of(
            snap.classes,
            dense,
            recency,
            z,
            cfg,
            _floors(snap, req, cfg),
        ),
        fidelity_costs(snap.tokens, per_item, cfg, excerpt_tokens),
        fixed_cost(counter, req.query, req.preamble, req.render, language, cfg),
        per_item,
        req,
        cfg,
        excerpts,
        counter,
        language,
    )


def _floors(snap: Snapshot, req: Request, cfg: AFMConfig) -> np.ndarray | None:
    """The least each message scores: a CRITICAL message of the user's that the rules name as a hard constraint
    (a cap, a prohibition, a health fact) scores at least ``hard_floor`` once overflow demotes it, so it comes
    before the messages of ordinary relevance; the loop's newest entry (the result the agent acts on next)
    scores like a CRITICAL message, first after the reservation."""
    floor = np.zeros(len(snap))
    if cfg.hard_floor is not None:
        floor[snap.hard & (snap.classes == CRITICAL)] = cfg.hard_floor
    if req.loop and len(snap):
        floor[-1] = cfg.critical_score
    return floor if floor.any() else None


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
