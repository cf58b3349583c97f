"""The extractive compressor and the placeholder topic: deterministic, query-independent, instant.

The compressor is the guaranteed path: the llama.cpp compressor is checked against the same facts and
falls back to it. Its units are whole sentences and list items, kept verbatim, so what it sends is
grammatical and says only what the message said; a cut inside a sentence ("I avoid staying in
large.") can invert a meaning, a dropped sentence cannot. Every sentence that carries a fact (a
number, a negation, a stated preference, a named thing or a hard constraint: ``facts.carries_facts``)
or asks a real question is kept, and so is the most telling of the others; the rest fill what is left
of the target by value per token, best first, and small talk and offers never. Within a kept sentence only two trims are made, each only when the sentence keeps all its
facts without it: a filler opener ("Well, ", "Thanks, ", "Кстати, ") and a parenthetical. A message
that cannot be shortened this way stays longer than the target, and one that cannot be shortened at
all comes back unchanged, for the engine to send Full or as a placeholder.

The topic extractor names a message by its highest-scoring key phrases rather than its first words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from . import facts
from .lexicon import OFFER_RE, PARENTHETICAL_RE, STOPWORDS, is_named, is_number, sentence_spans, split_sentences, words
from ..core.protocols import Compressor, TokenCounter
from .rules import is_small_talk
from ..core.types import Compression

_OPENER_RE = re.compile(
    r"^(?:(?:well|oh|oh wow|wow|so|okay|ok|alright|all right|anyway|actually|honestly|hi|hello|hey|thanks|thank you|great"
    r"|perfect|cool|sure|ну|так|кстати|слушай(?:те)?|короче|ой|ладно|хорошо|вообще-то|в общем|спасибо|привет"
    r"|здравствуйте|отлично)(?: there)?\s*[,!]\s+)+",
    re.IGNORECASE,
)
_NO_START = frozenset("and but or nor и но а или".split())  # what a sentence cannot start with after a trim


@dataclass(frozen=True, slots=True)
class Unit:
    """A sentence or list item of a message: as written, after the safe trims, and what followed it."""

    verbatim: str
    trimmed: str
    gap: str  # the text between this unit and the next one in the source ("" for the last)
    kept: bool  # never dropped: it has a fact, or it is a real question


def _trim(sentence: str) -> str:
    """The sentence without a filler opener and without parentheticals, when what is left is still a
    sentence (three words or more, not starting with a conjunction) that keeps every fact."""
    out = PARENTHETICAL_RE.sub("", sentence)
    opener = _OPENER_RE.match(out)
    if opener:
        rest = out[opener.end():]
        out = rest[:1].upper() + rest[1:] if sentence[:1].isupper() else rest
    left = out.split()
    if out == sentence or len(left) < 3 or left[0].lower() in _NO_START or facts.check(sentence, out) is not None:
        return sentence
    return out


def units(text: str) -> list[Unit]:
    """The message as units, in order: ``"".join(u.verbatim + u.gap for u in units(text))`` is the
    text without its outer whitespace."""
    spans = sentence_spans(text)
    out = []
    for k, (a, b) in enumerate(spans):
        sentence = text[a:b]
        gap = text[b:spans[k + 1][0]] if k + 1 < len(spans) else ""
        out.append(Unit(sentence, _trim(sentence), gap, _kept(sentence)))
    return out


def _content(sentence: str) -> list[str]:
    return [t for t in words(sentence) if t[:1].isalnum() and t.lower() not in STOPWORDS]


def _kept(sentence: str) -> bool:
    """A sentence the compressor never drops: one with a fact, or a question of two content words or
    more that is not an offer (what was asked is what the next turn answers: "What about the money
    side?"; "Would you like me to book it?" is not one)."""
    question = sentence.rstrip().endswith("?") and not OFFER_RE.match(sentence)
    return facts.carries_facts(sentence) or (question and len(_content(sentence)) >= 2)


def _value(unit: Unit, first: bool) -> float:
    """How much a sentence that may be dropped tells: its content words, one more for the opening
    sentence (it usually names the subject). 0 for small talk, offers and a sentence with at most two
    content words ("I can understand that."), which are never kept."""
    content = _content(unit.verbatim)
    if is_small_talk(unit.verbatim) or OFFER_RE.match(unit.verbatim) or len(content) <= 2:
        return 0.0
    return len(content) + (1.0 if first else 0.0)


def assemble(parts: Sequence[Unit], chosen: Sequence[int], trimmed: bool) -> str:
    """The chosen units in source order, each followed by its own separator from the source (so list
    items stay on their lines and a sentence keeps its full stop or semicolon)."""
    order = sorted(chosen)
    out = []
    for k, i in enumerate(order):
        out.append(parts[i].trimmed if trimmed else parts[i].verbatim)
        if k + 1 < len(order):
            out.append(parts[i].gap or " ")
    return "".join(out)


class ExtractiveCompressor:
    """Whole sentences, verbatim but for safe trims, to about ``ratio`` of the tokens.

    Every sentence with a fact is kept, so a fact-dense message can stay above the target ratio:
    losing "no more than 300k" to hit a ratio would be worse than no compression. The result is
    checked against the source with ``facts.check``; should a trim ever lose a fact, the untrimmed
    sentences are used. A form that saves less than ``min_saving`` of the tokens (default 15 %) is
    not made: dropping "Hi there, " from a long message costs a reader the original wording for next
    to nothing, so the message comes back unchanged and the engine sends it Full or as a
    placeholder.
    """

    # The name keys every cached compressed form (``engine.ingest``): a new name for sentence units, so
    # forms the clause-and-prune compressor stored under "extractive" are never served again.
    name = "extractive-sentences"

    def __init__(self, counter: TokenCounter, min_tokens: int = 8, min_saving: float = 0.15) -> None:
        self._counter = counter
        self._min_tokens = min_tokens
        self._min_saving = min_saving

    def compress(self, text: str, ratio: float) -> Compression:
        total = self._counter.count(text)
        if total <= self._min_tokens:
            return Compression(text, self.name)
        parts = units(text)
        target = max(self._min_tokens // 2, round(total * ratio))
        for trimmed in (True, False):
            candidate = assemble(parts, self._choose(parts, target, trimmed), trimmed)
            if self._counter.count(candidate) <= total * (1 - self._min_saving) and facts.check(text, candidate) is None:
                return Compression(candidate, self.name)
        return Compression(text, self.name)

    def _choose(self, parts: list[Unit], target: int, trimmed: bool) -> set[int]:
        """Every unit that must stay and the most telling other one, then the others by value per
        token (best first) while they fit the target. The facts alone can be the least of a message
        ("That's funny, like Bill Murray. He thinks Kung Fu Hustle is the supreme achievement of
        modern comedy."), so its best other sentence stays too."""
        costs = [self._counter.count(u.trimmed if trimmed else u.verbatim) for u in parts]
        values = [_value(u, i == 0) for i, u in enumerate(parts)]
        chosen = {i for i, u in enumerate(parts) if u.kept}
        used = sum(costs[i] for i in chosen)
        ranked = sorted((i for i in range(len(parts)) if i not in chosen and values[i] > 0),
                        key=lambda i: (-values[i] / max(1, costs[i]) ** 0.5, i))
        for k, i in enumerate(ranked):
            if k and used + costs[i] > target:
                continue
            chosen.add(i)
            used += costs[i]
        return chosen or {0}


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
