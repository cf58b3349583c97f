"""Checks on a shorter form of a message before it is trusted, and the compressor that applies them.

A small local model follows instructions most of the time, but it also stops at its token cap in the
middle of a sentence, swaps facts between items, drops a "not" or invents a clause. ``SummaryGuard``
accepts a form only when every check below holds; it reads any candidate, a model's summary or the
extractive compressor's sentences. ``GuardedCompressor`` tries the model, runs the guard, and otherwise
returns the extractive form (whose own facts are checked by the same ``facts.check``), saying which one
it used and why in ``Compression.method``.

The checks, cheapest first (the first that fails is the verdict's reason):

``empty``
    no words at all.
``not shorter``
    as many tokens as the source or more: not a compression.
``too long``
    only when a target is given: more than ``target_tokens * length_slack + length_extra`` tokens
    (defaults 1.2 and 2), or than ``limit_tokens`` when that is larger.
``cut off``
    the form stops inside a source sentence: its last word is a cut source word ("плани" for
    "планируем"), or, with no closing punctuation, the last two or three words of its last sentence
    continue in the source with a word (a model that copied until its token cap). A clause that ends where the source has a comma
    is not cut.
``dropped number`` / ``dropped unit`` / ``invented number`` / ``dropped negation`` / ``dropped preference`` / ``dropped name``
    a fact of the source is lost, or a number is made up: see ``afm_local.text.facts`` (every number
    with its unit, every negation with the verb and object it governs, the object of every stated
    preference, every named thing).
``words dropped``
    a sentence of the form is a source sentence with words taken out of it (other than a
    parenthetical): "What about money." for "What about the money side?", "Chiang Mai Krabi?" for
    "Chiang Mai or Krabi?". Such forms read as a sentence and say less, or something else, than the
    one they come from; a shorter form leaves whole sentences out or words them anew.
``low similarity``
    cosine of the embeddings of form and source below the threshold for the source's language. This
    is the one check that depends on the embedder, so its thresholds live in ``GuardConfig`` and
    nowhere else; the values below are MiniLM's, chosen on ``data/compression/messages.jsonl``
    (``python -m scripts.bench_compression --calibrate``): English hand-written faithful summaries score
    0.81 to 0.99 with their source (median 0.90), the closest summary of a *different* English message
    at most 0.52, so 0.60 sits above every negative. MiniLM is an English model and splits Cyrillic
    into single letters, so any two Russian texts look alike: Russian faithful summaries score 0.83
    or more, the closest different message up to 0.79; 0.80 is the only value that rejects those and
    keeps the faithful ones, and the text checks carry the weight there. Another embedder needs its
    own ``GuardConfig``. multilingual-e5-small puts even unrelated texts mostly at 0.75
    to 0.85; one threshold near 0.91 separates both languages on the same data (docs/benchmarks/embedder.md).

A topic label is accepted when it has 3 to 6 words (split on spaces), invents no number, and its
cosine with the source is at least ``min_topic_similarity`` (0.25 for MiniLM: KeyphraseTopicer labels
score 0.26 to 0.87 with their own English message and a median 0.24 with the closest other one).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Union

import numpy as np

from . import facts
from .compression import KeyphraseTopicer
from .lexicon import PARENTHETICAL_RE, detect_language, split_sentences, words
from ..core.protocols import Compressor, Embedder, TokenCounter, Topicer
from ..core.types import Compression


@dataclass(frozen=True, slots=True)
class GuardConfig:
    """Every threshold of the guard, in one place. The similarity ones belong to an embedder (these
    are MiniLM-L6's); the length ones to the target ratio the engine asks for."""

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
    """Whether ``candidate`` stops inside a sentence of ``source`` (see ``cut off`` above)."""
    last = split_sentences(candidate)[-1:] or [""]
    tail = [w.lower() for w in words(last[0]) if w[:1].isalnum()][-3:]
    if not tail or candidate.rstrip()[-1:] in ".!?…)\"'»”":
        return False
    src = [[w.lower() for w in words(s)] for s in split_sentences(source)]
    vocabulary = {w for sentence in src for w in sentence}
    if tail[-1] not in vocabulary and len(tail[-1]) >= 2 and any(w.startswith(tail[-1]) for w in vocabulary):
        return True
    n = len(tail)
    return n >= 2 and any(s[j:j + n] == tail and s[j + n][:1].isalnum() for s in src for j in range(len(s) - n))


def _contiguous(part: list[str], whole: list[str]) -> bool:
    n = len(part)
    return any(whole[j:j + n] == part for j in range(len(whole) - n + 1))


def _subsequence(part: list[str], whole: list[str]) -> bool:
    it = iter(whole)
    return all(word in it for word in part)


def words_dropped(source: str, candidate: str) -> bool:
    """Whether a sentence of ``candidate`` (two words or more) is a source sentence with words taken
    out of it: in order in one source sentence, but not as one run of it, even without its
    parentheticals (see ``words dropped`` above)."""
    variants = []
    for sentence in split_sentences(source):
        variants.append(facts.plain_words(sentence))
        bare = PARENTHETICAL_RE.sub("", sentence)
        if bare != sentence:
            variants.append(facts.plain_words(bare))
    for sentence in split_sentences(candidate):
        part = facts.plain_words(sentence)
        if len(part) >= 2 and not any(_contiguous(part, v) for v in variants) and any(
                _subsequence(part, v) for v in variants):
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

    def check(self, source: str, summary: str, target_tokens: int | None = None,
              limit_tokens: int | None = None) -> GuardVerdict:
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


PrimaryLike = Union[Compressor, Callable[[], Any], None]


class GuardedCompressor:
    """The model's summary when the guard accepts it, the extractive compression otherwise.

    ``primary`` is a compressor (with ``compress`` and ``topic``), a zero-argument factory that
    builds one on first use (so a missing model file is found, and recorded, lazily), or ``None``.
    ``method`` of the result is the primary's (``"llama:<model>"``) when accepted, else
    ``f"{fallback.name}(guard:<reason>)"``, e.g. ``"extractive(guard:dropped number)"``.
    ``counts`` and ``topic_counts`` hold how often each outcome happened, for metrics.

    ``length_policy="target"`` (default) holds the model to ``SummaryGuard``'s target length;
    ``"fallback"`` also accepts a summary up to the length of the extractive form it would be
    replaced by (which itself ignores the target whenever facts need the room). The benchmark
    reports both.
    """

    def __init__(
        self,
        primary: PrimaryLike,
        fallback: Compressor,
        guard: SummaryGuard,
        topic_fallback: Topicer | None = None,
        *,
        min_tokens: int = 8,
        length_policy: str = "target",
    ) -> None:
        if length_policy not in ("target", "fallback"):
            raise ValueError("length_policy must be 'target' or 'fallback'")
        self.length_policy = length_policy
        self._primary_source = primary
        self._primary: Any = None
        self.primary_error: str | None = None
        self.fallback = fallback
        self.guard = guard
        self.topic_fallback = topic_fallback or KeyphraseTopicer()
        self.min_tokens = min_tokens
        self.counts: dict[str, int] = {}
        self.topic_counts: dict[str, int] = {}
        self.last_verdict: GuardVerdict | None = None
        self._lock = threading.Lock()
        self._resolved = False
        self.name = "guarded"

    # -- primary resolution ----------------------------------------------------------------------

    @property
    def primary(self) -> Any:
        with self._lock:
            if not self._resolved:
                self._resolved = True
                source = self._primary_source
                if source is None:
                    self.primary_error = "no model configured"
                elif hasattr(source, "compress"):
                    self._primary = source
                else:
                    try:
                        self._primary = source()
                    except Exception as exc:  # a missing or corrupt model file, no llama_cpp, ...
                        self.primary_error = f"{type(exc).__name__}: {exc}"
            return self._primary

    def _count(self, table: dict[str, int], key: str) -> None:
        with self._lock:
            table[key] = table.get(key, 0) + 1

    def stats(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {"compress": dict(self.counts), "topic": dict(self.topic_counts)}

    # -- protocols -------------------------------------------------------------------------------

    def compress(self, text: str, ratio: float) -> Compression:
        total = self.guard.counter.count(text)
        if total <= self.min_tokens:
            return self._fallback(text, ratio, "short input")
        primary = self.primary
        if primary is None:
            return self._fallback(text, ratio, "model unavailable")
        try:
            candidate = primary.compress(text, ratio)
        except Exception as exc:
            self.last_verdict = GuardVerdict(False, "model error", {"error": f"{type(exc).__name__}: {exc}"})
            return self._fallback(text, ratio, "model error")
        target = max(1, round(total * ratio))
        limit = None
        if self.length_policy == "fallback":
            # Never reject a summary for being longer than the target when what we would send
            # instead (the extractive form, which keeps every fact-carrying sentence) is longer still.
            limit = self.guard.counter.count(self.fallback.compress(text, ratio).text)
        verdict = self.guard.check(text, candidate.text, target, limit)
        self.last_verdict = verdict
        if verdict.accepted:
            self._count(self.counts, "accepted")
            return candidate
        return self._fallback(text, ratio, verdict.reason)

    def _fallback(self, text: str, ratio: float, reason: str) -> Compression:
        self._count(self.counts, f"rejected:{reason}")
        result = self.fallback.compress(text, ratio)
        return Compression(result.text, f"{result.method}(guard:{reason})")

    def topic(self, text: str) -> str:
        return self.topic_with_method(text)[0]

    def topic_with_method(self, text: str) -> tuple[str, str]:
        """The topic and who produced it (``"llama:<model>"`` or ``"keyphrase(guard:<reason>)"``)."""
        primary = self.primary
        reason = "model unavailable"
        if primary is not None and hasattr(primary, "topic"):
            try:
                label = primary.topic(text)
                verdict = self.guard.check_topic(text, label)
                reason = verdict.reason
                if verdict.accepted:
                    self._count(self.topic_counts, "accepted")
                    return label, getattr(primary, "name", "primary")
            except Exception:
                reason = "model error"
        self._count(self.topic_counts, f"rejected:{reason}")
        return self.topic_fallback.topic(text), f"{self.topic_fallback.name}(guard:{reason})"
