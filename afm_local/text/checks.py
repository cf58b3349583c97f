"""The checks a shorter form of a message must pass before it is trusted: ``SummaryGuard``.

It reads any candidate, a model's summary or the extractive compressor's sentences, and names the
first check that fails. The checks and how their thresholds were chosen: docs/guard.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.protocols import Embedder, TokenCounter
from . import facts
from .lexicon import PARENTHETICAL_RE, detect_language, split_sentences, words


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """Every threshold of the guard. The similarity ones belong to an embedder (the defaults are
    MiniLM-L6's; each embedder's are in ``local.embedding.EMBEDDERS``); the length ones to the target
    ratio the engine asks for."""

    min_similarity: float = 0.60
    min_similarity_cyrillic: float | None = 0.80
    min_topic_similarity: float = 0.25
    length_slack: float = 1.2
    length_extra: int = 2


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """Whether a summary (or topic) may be used, and the first check that failed."""

    accepted: bool
    reason: str  # "accepted" or the name of the failed check
    details: dict[str, Any] = field(default_factory=dict)


def cut_off(source: str, candidate: str) -> bool:
    """Whether ``candidate`` stops inside a sentence of ``source`` (docs/guard.md: ``cut off``)."""
    last = split_sentences(candidate)[-1:] or [""]
    tail = [w.lower() for w in words(last[0]) if w[:1].isalnum()][-3:]
    if not tail or candidate.rstrip()[-1:] in ".!?…)\"'»”":
        return False
    src = [[w.lower() for w in words(s)] for s in split_sentences(source)]
    vocabulary = {w for sentence in src for w in sentence}
    if tail[-1] not in vocabulary and len(tail[-1]) >= 2 and any(w.startswith(tail[-1]) for w in vocabulary):
        return True
    n = len(tail)
    return n >= 2 and any(s[j : j + n] == tail and s[j + n][:1].isalnum() for s in src for j in range(len(s) - n))


def _contiguous(part: list[str], whole: list[str]) -> bool:
    n = len(part)
    return any(whole[j : j + n] == part for j in range(len(whole) - n + 1))


def _subsequence(part: list[str], whole: list[str]) -> bool:
    it = iter(whole)
    return all(word in it for word in part)


def words_dropped(source: str, candidate: str) -> bool:
    """Whether a sentence of ``candidate`` (two words or more) is a source sentence with words taken
    out of it: in order in one source sentence, but not as one run of it, even without its
    parentheticals (docs/guard.md: ``words dropped``)."""
    variants = []
    for sentence in split_sentences(source):
        variants.append(facts.plain_words(sentence))
        bare = PARENTHETICAL_RE.sub("", sentence)
        if bare != sentence:
            variants.append(facts.plain_words(bare))
    for sentence in split_sentences(candidate):
        part = facts.plain_words(sentence)
        if (
            len(part) >= 2
            and not any(_contiguous(part, v) for v in variants)
            and any(_subsequence(part, v) for v in variants)
        ):
            return True
    return False


class SummaryGuard:
    """Accepts a shorter form only if it is shorter, whole, keeps every fact and stays on meaning."""

    def __init__(self, embedder: Embedder, counter: TokenCounter, config: GuardConfig = GuardConfig()) -> None:
        self.embedder = embedder
        self.counter = counter
        self.config = config

    def max_tokens(self, target_tokens: int) -> int:
        return int(target_tokens * self.config.length_slack + self.config.length_extra)

    def threshold(self, source: str) -> float:
        """The similarity threshold for this source: a stricter one for mostly Cyrillic text."""
        cfg = self.config
        if cfg.min_similarity_cyrillic is not None and detect_language(source) == "ru":
            return max(cfg.min_similarity, cfg.min_similarity_cyrillic)
        return cfg.min_similarity

    def similarity(self, a: str, b: str) -> float:
        """Cosine of two message texts, both embedded as passages (with multilingual-e5-small, passage
        on both sides separated faithful summaries from other messages' slightly better than query on
        both sides: docs/benchmarks/embedder.md)."""
        vecs = self.embedder.embed([a, b], "passage")
        return float(np.dot(vecs[0], vecs[1]))

    def check(
        self, source: str, summary: str, target_tokens: int | None = None, limit_tokens: int | None = None
    ) -> GuardVerdict:
        """The verdict on ``summary`` as a shorter form of ``source``. ``target_tokens`` adds the
        length check (a model is held to the ratio it was asked for); ``limit_tokens``, when given,
        raises that limit (the guarded compressor's ``length_policy="fallback"`` passes the length
        of the form it would otherwise send)."""
        if not facts.plain_words(summary):
            return GuardVerdict(False, "empty")
        tokens, source_tokens = self.counter.count(summary), self.counter.count(source)
        if tokens >= source_tokens:
            return GuardVerdict(False, "not shorter", {"tokens": tokens, "source": source_tokens})
        if target_tokens is not None:
            limit = max(self.max_tokens(target_tokens), limit_tokens or 0)
            if tokens > limit:
                return GuardVerdict(False, "too long", {"tokens": tokens, "limit": limit})
        if cut_off(source, summary):
            return GuardVerdict(False, "cut off")
        failure = facts.check(source, summary)
        if failure:
            return GuardVerdict(False, failure[0], failure[1])
        if words_dropped(source, summary):
            return GuardVerdict(False, "words dropped")
        sim = self.similarity(source, summary)
        if sim < self.threshold(source):
            return GuardVerdict(False, "low similarity", {"similarity": round(sim, 4)})
        return GuardVerdict(True, "accepted", {"similarity": round(sim, 4), "tokens": tokens})

    def check_topic(self, source: str, topic: str) -> GuardVerdict:
        n = len(topic.split())
        if "\n" in topic.strip():
            return GuardVerdict(False, "multiple lines")
        if not 3 <= n <= 6:
            return GuardVerdict(False, "word count", {"words": n})
        known = {form for number in facts.numbers(source) for form in number.forms}
        if any(not (number.forms & known) for number in facts.numbers(topic)):
            return GuardVerdict(False, "invented number")
        sim = self.similarity(source, topic)
        if sim < self.config.min_topic_similarity:
            return GuardVerdict(False, "low similarity", {"similarity": round(sim, 4)})
        return GuardVerdict(True, "accepted", {"similarity": round(sim, 4)})
