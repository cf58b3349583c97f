"""The extractive compressor and the placeholder topic: deterministic, query-independent, instant.

The compressor is the guaranteed path: the llama.cpp compressor is checked against it and falls
back to it. It keeps clauses in their original order, every one that carries a number, a negation
or a hard constraint and then the most informative others, until the target share of tokens is
reached; when the kept clauses are still over target, it prunes filler words from them while
keeping every protected token. The topic extractor names a message by its highest-scoring key phrases rather
than its first words.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from .lexicon import (
    CLAUSE_RE,
    MEANING_WORDS,
    SENTENCE_RE,
    STOPWORDS,
    is_named,
    is_negation,
    is_number,
    word_spans,
    words,
)
from ..core.protocols import Compressor, TokenCounter
from .rules import hard_constraint_hits, hard_constraint_spans
from ..core.types import Compression

_NO_SPACE_BEFORE = re.compile(r"\s+([,.;:!?%)\]…])")
_NO_SPACE_AFTER = re.compile(r"([(\[])\s+")


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_RE.split(text.strip()) if s and s.strip()]


def split_clauses(sentence: str) -> list[str]:
    """Clauses at commas, colons and contrastive conjunctions: the units a summary keeps or drops."""
    return [c.strip() for c in CLAUSE_RE.split(sentence) if c and c.strip(" ,;:")]


def _join(tokens: list[str]) -> str:
    text = " ".join(tokens)
    return _NO_SPACE_AFTER.sub(r"\1", _NO_SPACE_BEFORE.sub(r"\1", text))


def _protected(word: str, first: bool) -> bool:
    return is_number(word) or is_negation(word) or is_named(word, first) or word.lower() in MEANING_WORDS


def _droppable(clause: str, spans: list[tuple[str, int, int]]) -> list[int]:
    """Indexes of filler words that may go: not protected, not inside a constraint phrase, not
    right after a negation (so "cannot move" stays "cannot move")."""
    constraint = hard_constraint_spans(clause)
    out = []
    for i, (tok, start, end) in enumerate(spans):
        if _protected(tok, i == 0) or any(a <= start and end <= b for a, b in constraint):
            continue
        if i and is_negation(spans[i - 1][0]):
            continue
        if tok.lower() in STOPWORDS:
            out.append(i)
    return out


def carries_facts(text: str) -> bool:
    """A number, a negation, a named thing or a hard constraint: what a compressed form must keep."""
    toks = words(text)
    return bool(hard_constraint_hits(text)) or any(
        is_number(t) or is_negation(t) or is_named(t, i == 0) for i, t in enumerate(toks)
    )


def _value(clause: str, first: bool) -> float:
    toks = words(clause)
    value = 1.0 * sum(is_named(t, i == 0) for i, t in enumerate(toks))
    content = [t for t in toks if t[:1].isalnum() and t.lower() not in STOPWORDS]
    value += len(content) / max(1, len(toks))
    return value + (0.5 if first else 0.0)


class ExtractiveCompressor:
    """Clause selection, then filler pruning, to about ``ratio`` of the tokens.

    Every clause that carries a number, a negation, a named thing or a hard constraint is kept, so a fact-dense
    message can stay above the target ratio: losing "no more than 300k" to hit a ratio would be
    worse than no compression. The other clauses fill what is left of the target by value per token.
    """

    name = "extractive"

    def __init__(self, counter: TokenCounter, min_tokens: int = 8) -> None:
        self._counter = counter
        self._min_tokens = min_tokens

    def compress(self, text: str, ratio: float) -> Compression:
        total = self._counter.count(text)
        if total <= self._min_tokens:
            return Compression(text, self.name)
        target = max(self._min_tokens // 2, round(total * ratio))
        units = [(si, clause) for si, sentence in enumerate(split_sentences(text)) for clause in split_clauses(sentence)]
        costs = [self._counter.count(clause) for _, clause in units]
        chosen = {i for i, (_, clause) in enumerate(units) if carries_facts(clause)}
        used = sum(costs[i] for i in chosen)
        ranked = sorted(
            (i for i in range(len(units)) if i not in chosen),
            key=lambda i: (-_value(units[i][1], i == 0) / max(1, costs[i]) ** 0.5, i),
        )
        for i in ranked:
            if used >= target:
                break
            if used and used + costs[i] > target:
                continue
            chosen.add(i)
            used += costs[i]
        kept = [(units[i][0], units[i][1]) for i in sorted(chosen)]
        if used > target:
            kept = self._prune(kept, target / max(1, used))
        result = _assemble(kept)
        if not result or self._counter.count(result) >= total:
            return Compression(text, self.name)
        return Compression(result, self.name)

    def _prune(self, clauses: list[tuple[int, str]], share: float) -> list[tuple[int, str]]:
        """Drop filler words from each clause, first to last, towards its share of the target."""
        out = []
        for si, clause in clauses:
            spans = word_spans(clause)
            toks = [t for t, _, _ in spans]
            keep = [True] * len(toks)
            goal = max(2, round(self._counter.count(clause) * share))
            for i in _droppable(clause, spans):
                if self._counter.count(_join([t for t, k in zip(toks, keep) if k])) <= goal:
                    break
                keep[i] = False
            pruned = _join([t for t, k in zip(toks, keep) if k]).strip(" ,;:-")
            if pruned:
                out.append((si, pruned))
        return out


def _assemble(clauses: list[tuple[int, str]]) -> str:
    """Clauses of one sentence joined by commas, sentences ended with a full stop."""
    sentences: dict[int, list[str]] = {}
    for si, clause in clauses:
        sentences.setdefault(si, []).append(clause.strip(" ,;:"))
    out = []
    for parts in sentences.values():
        sentence = ", ".join(p for p in parts if p)
        if sentence and sentence[-1] not in ".!?…":
            sentence += "."
        out.append(sentence[:1].upper() + sentence[1:])
    return " ".join(out)


def constraint_form(text: str, is_constraint: Callable[[Sequence[str]], list[bool]], compressor: Compressor,
                    ratio: float) -> str:
    """A long constraint message as its constraint sentences verbatim and the rest compressed, in order.

    ``is_constraint`` says which sentences carry a constraint (the classifier, sentence by sentence).
    The constraint itself is never paraphrased; "" when there is nothing to gain (a single sentence,
    no sentence or every sentence a constraint)."""
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return ""
    flags = is_constraint(sentences)
    if not any(flags) or all(flags):
        return ""
    parts: list[str] = []
    run: list[str] = []
    for sentence, flag in zip(sentences, flags):
        if not flag:
            run.append(sentence)
            continue
        if run:
            parts.append(compressor.compress(" ".join(run), ratio).text)
            run = []
        parts.append(sentence)
    if run:
        parts.append(compressor.compress(" ".join(run), ratio).text)
    return " ".join(parts)


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
