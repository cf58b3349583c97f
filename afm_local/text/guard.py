"""Checks on a model's summary before it is trusted, and the compressor that applies them.

A small local model follows instructions most of the time, but it also copies its input, cuts a
sentence in half at its token cap, swaps facts between items or invents a clause. ``SummaryGuard``
accepts a summary only when every check below holds; ``GuardedCompressor`` tries the model, runs the
guard, and otherwise returns the deterministic extractive compression, saying which one it used and
why in ``Compression.method``.

The checks, cheapest first (the first that fails is the verdict's reason):

``empty``
    no words at all.
``multiple lines``
    a summary is one line.
``too long``
    more than ``target_tokens * length_slack + length_extra`` tokens (defaults 1.2 and 2: a 20 %
    slack, plus 2 tokens so a target of a handful of tokens is not missed by one word).
``copy of input``
    the summary has at least ``copy_min_words`` (6) words and one verbatim run of source words
    covers at least ``max_copy`` (0.85) of them: the model copied (often a truncated prefix) rather
    than summarised. Words are compared lower-cased, without punctuation.
``dropped number``
    a number of the source is missing. Numbers are normalised: thousands separators (space,
    no-break space, thin space, comma before exactly three digits) are removed and a decimal comma
    becomes a dot, so "300,000" == "300 000" == "300000" and "1,2" == "1.2". A multiplier word right
    after a number also yields its expanded value, on both sides: "300k", "300 тыс.", "300 тысяч"
    all match "300 000"; "2.4 million" and "2,4 млн" match "2400000". Times keep their colon
    ("17:00"). Spelled-out numbers ("six weeks") are not required, since the extractive fallback does
    not see them either, but they do license a digit in the summary ("six" -> "6").
``invented number``
    the summary has a number the source does not have (by the same normalisation).
``dropped negation``
    the summary has fewer negation words than the source (``lexicon.is_negation`` plus forms such
    as "никаких", "никто", "nothing"), less one for every four, since repeated negations may merge
    ("нельзя X, и Y тоже нельзя" -> "нельзя X и Y"). Counting, not aligning: "no" for "not" passes,
    "max 250" for "not more than 250" does not, which is the safe side.
``dropped name``
    a named thing of the source (an acronym, or a capitalised word that does not start a
    sentence) has no word in the summary sharing its stem (case-insensitive prefix of
    ``max(4, len - 3)`` letters, so Russian case endings match: "Иваново" / "Иванове").
``low similarity``
    cosine of the MiniLM embeddings of summary and source below the threshold: ``min_similarity``
    (0.60) for Latin-script text, ``min_similarity_cyrillic`` (0.80) for mostly Cyrillic text.
    Chosen on ``data/compression/messages.jsonl`` (``python scripts/bench_compression.py
    --calibrate`` prints the figures): English hand-written faithful summaries score 0.81 to 0.99
    with their source (median 0.90), while the closest summary of a *different* English message
    scores at most 0.52 (95th percentile 0.41), so 0.60 sits above every negative with room for
    terser summaries than ours. MiniLM is an English model and splits Cyrillic into single letters,
    so any two Russian texts look alike: Russian faithful summaries score 0.83 or more (median 0.92), the closest
    different message up to 0.79 (median 0.73); 0.80 is the only value that rejects those and
    keeps the faithful ones, and it is a weak check for Russian (the number, negation and name
    checks carry the weight there). These thresholds are MiniLM's: multilingual-e5-small puts even
    unrelated texts mostly at 0.75 to 0.85, so with it they need its own values; on the same data one
    threshold near 0.91 separates both languages (docs/benchmarks/embedder.md).

A topic label is accepted when it has 3 to 6 words (split on spaces), invents no number, and its
cosine with the source is at least ``min_topic_similarity`` (0.25). On the same data KeyphraseTopicer
labels score 0.26 to 0.87 with their own English message (median 0.53) and a median 0.24 with the
closest other one, so 0.25 only catches labels about nothing in the message; for Russian it catches
nothing (other messages' labels score 0.68 median).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Union

import numpy as np

from .compression import KeyphraseTopicer, split_sentences
from .lexicon import detect_language, is_named, is_negation, words
from ..core.protocols import Compressor, Embedder, TokenCounter, Topicer
from ..core.types import Compression

DEFAULT_MIN_SIMILARITY = 0.60
DEFAULT_MIN_SIMILARITY_CYRILLIC = 0.80
DEFAULT_MIN_TOPIC_SIMILARITY = 0.25

_EXTRA_NEGATIONS = frozenset(
    """
    nothing nobody nowhere none neither nor never without no-one
    никаких никакой никакая никакое никакие никого никому никто нигде никуда нисколько ничем
    """.split()
)

_MULTIPLIERS = {
    "k": 1e3, "тыс": 1e3, "тысяч": 1e3, "тысячи": 1e3, "тысяча": 1e3, "thousand": 1e3,
    "m": 1e6, "mln": 1e6, "million": 1e6, "millions": 1e6, "млн": 1e6, "миллион": 1e6,
    "миллиона": 1e6, "миллионов": 1e6, "bn": 1e9, "billion": 1e9, "млрд": 1e9,
}
_NUMBER_WORDS = {
    w: i
    for i, group in enumerate(
        [
            "zero ноль", "one один одна одно", "two два две двое двух", "three три трое трёх трех",
            "four четыре четверо четырёх", "five пять пятеро", "six шесть шестеро", "seven семь",
            "eight восемь", "nine девять", "ten десять", "eleven одиннадцать", "twelve двенадцать",
        ]
    )
    for w in group.split()
}
_TIME_RE = re.compile(r"\b\d{1,2}:\d{2}\b")
_NUM_RE = re.compile(
    r"(?<![\d.,])(\d{1,3}(?:[ \u00a0\u202f,]\d{3})+(?![\d])(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(?:\s?([A-Za-zА-Яа-яЁё]+))?"
)
_WORD_RE = re.compile(r"[\w']+", re.UNICODE)


def _value(raw: str) -> float:
    s = raw.replace("\u00a0", " ").replace("\u202f", " ")
    s = re.sub(r"(?<=\d)[ ,](?=\d{3}(?!\d))", "", s)
    return float(s.replace(",", ".").replace(" ", ""))


def number_forms(text: str) -> list[frozenset[str]]:
    """Each number of ``text`` as the set of normalised forms it may take (raw, expanded)."""
    out: list[frozenset[str]] = []
    for m in _TIME_RE.finditer(text):
        out.append(frozenset({m.group()}))
    rest = _TIME_RE.sub(" ", text)
    for m in _NUM_RE.finditer(rest):
        try:
            value = _value(m.group(1))
        except ValueError:
            continue
        forms = {_fmt(value)}
        suffix = (m.group(2) or "").lower().rstrip(".")
        if suffix in _MULTIPLIERS:
            forms.add(_fmt(value * _MULTIPLIERS[suffix]))
        out.append(frozenset(forms))
    return out


def _fmt(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


def _word_numbers(text: str) -> set[str]:
    return {_fmt(_NUMBER_WORDS[w]) for w in _WORD_RE.findall(text.lower()) if w in _NUMBER_WORDS}


def _negation(word: str) -> bool:
    return is_negation(word) or word.lower() in _EXTRA_NEGATIONS


def negations(text: str) -> list[str]:
    """Negation words of ``text``, lower-cased; every "n't" form and "cannot" count as "not"."""
    out = []
    for w in words(text):
        if _negation(w):
            low = w.lower().replace("’", "'")
            out.append("not" if low.endswith("n't") or low == "cannot" else low)
    return out


def negation_count(text: str) -> int:
    return len(negations(text))


def named_things(text: str) -> list[str]:
    """Acronyms and capitalised words that do not start a sentence, in order, without repeats.

    Hyphenated words are split first, so "GPL-licensed" names "GPL" and "152-ФЗ" names "ФЗ"."""
    seen: dict[str, str] = {}
    for sentence in split_sentences(text) or [text]:
        toks = [p for t in words(sentence) for p in re.split(r"[-‐–/]", t) if any(c.isalnum() for c in p)]
        for i, tok in enumerate(toks):
            tok = tok.strip(".'’")
            if len(tok) >= 2 and is_named(tok, i == 0) and any(c.isalpha() for c in tok):
                seen.setdefault(tok.lower(), tok)
    return list(seen.values())


def _plain_words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(text)]


def _longest_common_run(a: list[str], b: list[str]) -> int:
    """Length of the longest run of words that ``a`` and ``b`` share verbatim."""
    best = 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def _stem_match(name: str, candidates: list[str]) -> bool:
    low = name.lower().strip(".'’")
    n = min(len(low), max(4, len(low) - 3))
    stem = low[:n]
    return any(c.startswith(stem) or (len(c) >= 4 and low.startswith(c)) for c in candidates)


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """Whether a summary (or topic) may be used, and the first check that failed."""

    accepted: bool
    reason: str  # "accepted" or the name of the failed check
    details: dict[str, Any] = field(default_factory=dict)


class SummaryGuard:
    """Accepts a summary only if it is short, not a copy, keeps the facts and stays on meaning."""

    def __init__(
        self,
        embedder: Embedder,
        counter: TokenCounter,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
        *,
        min_similarity_cyrillic: float | None = DEFAULT_MIN_SIMILARITY_CYRILLIC,
        min_topic_similarity: float = DEFAULT_MIN_TOPIC_SIMILARITY,
        length_slack: float = 1.2,
        length_extra: int = 2,
        max_copy: float = 0.85,
        copy_min_words: int = 6,
    ) -> None:
        self.embedder = embedder
        self.counter = counter
        self.min_similarity = min_similarity
        self.min_similarity_cyrillic = min_similarity_cyrillic
        self.min_topic_similarity = min_topic_similarity
        self.length_slack = length_slack
        self.length_extra = length_extra
        self.max_copy = max_copy
        self.copy_min_words = copy_min_words

    def max_tokens(self, target_tokens: int) -> int:
        return int(target_tokens * self.length_slack + self.length_extra)

    def threshold(self, source: str) -> float:
        """The similarity threshold for this source: a stricter one for mostly Cyrillic text."""
        if self.min_similarity_cyrillic is not None and detect_language(source) == "ru":
            return max(self.min_similarity, self.min_similarity_cyrillic)
        return self.min_similarity

    def similarity(self, a: str, b: str) -> float:
        """Cosine of two message texts, both embedded as passages (with multilingual-e5-small, passage
        on both sides separated faithful summaries from other messages' slightly better than query on
        both sides: docs/benchmarks/embedder.md)."""
        vecs = self.embedder.embed([a, b], "passage")
        return float(np.dot(vecs[0], vecs[1]))

    def check(
        self, source: str, summary: str, target_tokens: int, limit_tokens: int | None = None
    ) -> GuardVerdict:
        """``limit_tokens``, when given, raises the length limit to at least that many tokens (the
        guarded compressor's ``length_policy="fallback"`` passes the fallback's length)."""
        summary_words = _plain_words(summary)
        if not summary_words:
            return GuardVerdict(False, "empty")
        if "\n" in summary.strip():
            return GuardVerdict(False, "multiple lines")
        tokens = self.counter.count(summary)
        limit = self.max_tokens(target_tokens)
        if limit_tokens is not None:
            limit = max(limit, limit_tokens)
        if tokens > limit:
            return GuardVerdict(False, "too long", {"tokens": tokens, "limit": limit})
        source_words = _plain_words(source)
        if len(summary_words) >= self.copy_min_words:
            run = _longest_common_run(summary_words, source_words)
            if run / len(summary_words) >= self.max_copy:
                return GuardVerdict(False, "copy of input", {"run": run, "words": len(summary_words)})
        src_numbers = number_forms(source)
        sum_numbers = number_forms(summary)
        sum_all = set().union(*sum_numbers) if sum_numbers else set()
        missing = [sorted(f)[0] for f in src_numbers if not (f & sum_all)]
        if missing:
            return GuardVerdict(False, "dropped number", {"missing": missing})
        src_all = (set().union(*src_numbers) if src_numbers else set()) | _word_numbers(source)
        invented = [sorted(f)[0] for f in sum_numbers if not (f & src_all)]
        if invented:
            return GuardVerdict(False, "invented number", {"invented": invented})
        need, have = negations(source), negations(summary)
        if len(have) < len(need) - len(need) // 4:
            return GuardVerdict(False, "dropped negation", {"source": need, "summary": have})
        names = named_things(source)
        lost = [n for n in names if not _stem_match(n, summary_words)]
        if lost:
            return GuardVerdict(False, "dropped name", {"missing": lost})
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
        src_all = set().union(*number_forms(source)) if number_forms(source) else set()
        src_all |= _word_numbers(source)
        if any(not (f & src_all) for f in number_forms(topic)):
            return GuardVerdict(False, "invented number")
        sim = self.similarity(source, topic)
        if sim < self.min_topic_similarity:
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
