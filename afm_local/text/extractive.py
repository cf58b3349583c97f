"""The extractive compressor: whole sentences of the message, verbatim but for safe trims.

Deterministic, query-independent and instant, it is the path that always runs; a model's summary is
checked against the same facts and falls back to it (``text.guarded``). What it keeps and why:
README.md, section Compression.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..core.protocols import Compressor, TokenCounter
from ..core.types import Compression
from . import facts
from .lexicon import OFFER_RE, PARENTHETICAL_RE, STOPWORDS, sentence_spans, split_sentences, words
from .rules import is_small_talk

_OPENER_RE = re.compile(
    r"^(?:(?:well|oh|oh wow|wow|so|okay|ok|alright|all right|anyway|actually|honestly|hi|hello|hey|thanks"
    r"|thank you|great|perfect|cool|sure"
    r"|ну|так|кстати|слушай(?:те)?|короче|ой|ладно|хорошо|вообще-то|в общем|спасибо|привет"
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
        rest = out[opener.end() :]
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
        gap = text[b : spans[k + 1][0]] if k + 1 < len(spans) else ""
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


def assemble(parts: Sequence[Unit], chosen: Iterable[int], trimmed: bool) -> str:
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
            if (
                self._counter.count(candidate) <= total * (1 - self._min_saving)
                and facts.check(text, candidate) is None
            ):
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
        ranked = sorted(
            (i for i in range(len(parts)) if i not in chosen and values[i] > 0),
            key=lambda i: (-values[i] / max(1, costs[i]) ** 0.5, i),
        )
        for k, i in enumerate(ranked):
            if k and used + costs[i] > target:
                continue
            chosen.add(i)
            used += costs[i]
        return chosen or {0}


def constraint_sentences(
    text: str, is_constraint: Callable[[Sequence[str]], list[bool]], compressor: Compressor, ratio: float
) -> str:
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
