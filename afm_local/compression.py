"""The extractive compressor and the placeholder topic: deterministic, query-independent, instant.

The compressor is the guaranteed path: the llama.cpp compressor is checked against it and falls
back to it. It keeps whole sentences in their original order, preferring those that carry numbers,
negations, named things and hard constraints, until the target share of tokens is reached; when a
single sentence is already over target, it prunes filler words from it while keeping every
protected token. The topic extractor names a message by its highest-scoring key phrases rather
than its first words.
"""

from __future__ import annotations

import re

from .lexicon import SENTENCE_RE, STOPWORDS, is_named, is_negation, is_number, word_spans, words
from .protocols import TokenCounter
from .rules import hard_constraint_hits, hard_constraint_spans
from .types import Compression

_NO_SPACE_BEFORE = re.compile(r"\s+([,.;:!?%)\]…])")
_NO_SPACE_AFTER = re.compile(r"([(\[])\s+")


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_RE.split(text.strip()) if s and s.strip()]


def _join(tokens: list[str]) -> str:
    text = " ".join(tokens)
    return _NO_SPACE_AFTER.sub(r"\1", _NO_SPACE_BEFORE.sub(r"\1", text))


def _protected(word: str, first: bool) -> bool:
    return is_number(word) or is_negation(word) or is_named(word, first)


def _droppable(sentence: str, spans: list[tuple[str, int, int]]) -> list[int]:
    """Indexes of filler words that may go: not protected, not inside a constraint phrase, not
    right after a negation (so "cannot move" stays "cannot move")."""
    constraint = hard_constraint_spans(sentence)
    out = []
    for i, (tok, start, end) in enumerate(spans):
        if _protected(tok, i == 0) or any(a <= start and end <= b for a, b in constraint):
            continue
        if i and is_negation(spans[i - 1][0]):
            continue
        if tok in {",", ".", "!", "?", "%"}:
            continue
        if tok.lower() in STOPWORDS or not tok.isalnum():
            out.append(i)
    return out


def _carries_facts(sentence: str) -> bool:
    toks = words(sentence)
    return bool(hard_constraint_hits(sentence)) or any(is_number(t) or is_negation(t) for t in toks)


def _sentence_value(sentence: str, position: int) -> float:
    toks = words(sentence)
    value = 0.0
    value += 3.0 * bool(hard_constraint_hits(sentence))
    value += 2.0 * any(is_number(t) for t in toks)
    value += 2.0 * any(is_negation(t) for t in toks)
    value += 1.0 * sum(is_named(t, i == 0) for i, t in enumerate(toks))
    content = [t for t in toks if t.isalnum() and t.lower() not in STOPWORDS]
    value += 0.5 * len(content) / max(1, len(toks))
    value += 0.5 if position == 0 else 0.0
    return value


class ExtractiveCompressor:
    """Sentence selection, then filler pruning, to about ``ratio`` of the tokens."""

    name = "extractive"

    def __init__(self, counter: TokenCounter, min_tokens: int = 8) -> None:
        self._counter = counter
        self._min_tokens = min_tokens

    def compress(self, text: str, ratio: float) -> Compression:
        total = self._counter.count(text)
        if total <= self._min_tokens:
            return Compression(text, self.name)
        target = max(self._min_tokens // 2, round(total * ratio))
        sentences = split_sentences(text)
        costs = [self._counter.count(s) for s in sentences]
        # Sentences that carry a number, a negation or a hard constraint are always kept (pruned if
        # need be); the rest fill the remaining target by value per token.
        must = [i for i, s in enumerate(sentences) if _carries_facts(s)]
        chosen = list(must)
        used = sum(costs[i] for i in must)
        ranked = sorted(
            (i for i in range(len(sentences)) if i not in must),
            key=lambda i: (-_sentence_value(sentences[i], i) / max(1, costs[i]) ** 0.5, i),
        )
        for i in ranked:
            if used >= target:
                break
            if used and used + costs[i] > target:
                continue
            chosen.append(i)
            used += costs[i]
        chosen.sort()
        pieces = [sentences[i] for i in chosen]
        if used > target:
            pieces = self._prune(pieces, target)
        result = " ".join(pieces)
        if self._counter.count(result) >= total:
            return Compression(text, self.name)
        return Compression(result, self.name)

    def _prune(self, sentences: list[str], target: int) -> list[str]:
        """Drop filler words, last first, until the target is met or only protected words are left."""
        out = []
        share = target / max(1, sum(self._counter.count(s) for s in sentences))
        for sentence in sentences:
            spans = word_spans(sentence)
            toks = [t for t, _, _ in spans]
            keep = [True] * len(toks)
            goal = max(3, round(self._counter.count(sentence) * share))
            for i in reversed(_droppable(sentence, spans)):
                if self._counter.count(_join([t for t, k in zip(toks, keep) if k])) <= goal:
                    break
                keep[i] = False
            out.append(_join([t for t, k in zip(toks, keep) if k]).strip(" ,;:-"))
        return [s for s in out if s]


class KeyphraseTopicer:
    """Names a message by its two best key phrases: runs of content words, named things first."""

    name = "keyphrase"

    def __init__(self, max_phrases: int = 2, max_words: int = 3) -> None:
        self._max_phrases = max_phrases
        self._max_words = max_words

    def topic(self, text: str) -> str:
        phrases: list[tuple[float, int, list[str]]] = []
        run: list[str] = []
        run_score = 0.0
        position = 0
        for sentence in split_sentences(text) or [text]:
            toks = words(sentence)
            for i, tok in enumerate(toks + ["."]):
                content = tok[:1].isalnum() and tok.lower() not in STOPWORDS and (len(tok) > 2 or is_number(tok))
                if content and len(run) < self._max_words:
                    run.append(tok)
                    run_score += 3.0 if is_named(tok, i == 0) else 2.0 if is_number(tok) else 1.0 + min(len(tok), 10) / 10
                    continue
                if run:
                    phrases.append((run_score, position, run))
                    position += 1
                run, run_score = ([tok], 1.0 + min(len(tok), 10) / 10) if content else ([], 0.0)
        if not phrases:
            return " ".join(words(text)[:3]) or "message"
        best = sorted(phrases, key=lambda p: (-p[0], p[1]))[: self._max_phrases]
        best.sort(key=lambda p: p[1])
        return ", ".join(" ".join(p[2]) for p in best)
