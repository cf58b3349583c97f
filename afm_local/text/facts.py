"""What a shorter form of a message must keep, found and checked as plain text (no model).

A shorter form is faithful only if a reader learns nothing false from it and loses none of what the
message binds: "I avoid staying in large." has every word of its source's first clause and says
something else. So a fact here is a word *with what it governs*, found in the source and looked for
in the candidate, the same way for the extractive compressor's own output and for a model's summary:

``number``
    every number with its unit: "300 000 рублей", "$4,000", "5 mg", "9 nights", "17:00". Numbers are
    normalised (thousands separators, decimal comma, "300k" = "300 тыс." = "300 000", spelled-out
    "two" = "2"); the unit is the word right after the number (after a multiplier word), or a
    currency sign before it, and must follow the same number in the candidate (stem match, "$" =
    "dollars", "₽" = "рублей"). List markers ("1." at the start of a line) are not facts.
``negation``
    every negation word (``lexicon.NEGATIONS``) with its scope: the next three content words of its
    clause (the negated verb and its object: "don't want to stay in hostels" -> stay, hostels; a
    list comma does not end the clause, ", because" and "but" do), and, when fewer than two follow,
    the words before it up to three ("кредит брать не будем" ->
    кредит, брать, будем; "the hotel is not available" -> hotel, available). The candidate needs one
    sentence with a negation word and every word of the scope.
``preference``
    every preference or constraint statement (``lexicon.PREFERENCE_RE``, outside questions) with its
    object: the next three content words of its clause. The candidate needs one sentence with them all.
``name``
    every named thing (an acronym, or a capitalised word that does not start its sentence), by stem,
    so Russian case endings match ("Иваново" / "Иванове").

Content words are words that are not ``lexicon.STOPWORDS`` nor numbers; words match by stem (a prefix of
``max(4, len - 3)`` letters). ``check`` returns the first fact the candidate loses, in the order
above after a check for numbers the candidate invents, or ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicon import (
    CLAUSE_OPENERS,
    CONTRASTS,
    NUMBER_WORDS,
    PREFERENCE_RE,
    STOPWORDS,
    is_named,
    is_negation,
    split_sentences,
    words,
)
from .rules import hard_constraint_hits

SCOPE_WORDS = 3

_MULTIPLIERS = {
    "k": 1e3,
    "тыс": 1e3,
    "тысяч": 1e3,
    "тысячи": 1e3,
    "тысяча": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mln": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "млн": 1e6,
    "миллион": 1e6,
    "миллиона": 1e6,
    "миллионов": 1e6,
    "bn": 1e9,
    "billion": 1e9,
    "млрд": 1e9,
}
_CURRENCIES = {
    "$": "dollar",
    "€": "euro",
    "£": "pound",
    "₽": "руб",
    "usd": "dollar",
    "eur": "euro",
    "gbp": "pound",
    "rub": "руб",
    "руб": "руб",
    "dollar": "dollar",
    "euro": "euro",
    "pound": "pound",
}
_TIME_RE = re.compile(r"(?<![\w:])\d{1,2}:\d{2}(?![\w:])")
_NUM_RE = re.compile(
    r"(?<![\w.,])(?P<num>\d{1,3}(?:[ \u00a0\u202f,]\d{3})+(?!\d)(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(?P<suffix>[^\W\d_]{1,3}\b)?(?:\s?(?P<mult>(?:"
    + "|".join(sorted(_MULTIPLIERS, key=len, reverse=True))
    + r")\b)\.?)?",
    re.IGNORECASE,
)
_ONE = frozenset("one один одна одно одного одной".split())
_DETERMINERS = frozenset(
    "the this that which any each every no another such other a эта этот это тот та то какой".split()
)
_ORDINALS = frozenset("st nd rd th s й я е го х".split())
_NEXT_WORD_RE = re.compile(r"\s*(%|°|[^\W\d_][\w'’-]*)")
_LIST_MARKER_RE = re.compile(r"(?m)^\s*\d{1,2}[.)](?=\s)")
_PLAIN_RE = re.compile(r"[\w'’]+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Number:
    """One number of a text: the normalised forms it may take, and its unit (``None`` if bare)."""

    forms: frozenset[str]
    unit: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Scope:
    """A negation or a preference and the content words it governs, in one sentence."""

    kind: str  # "negation" or "preference"
    trigger: str
    words: tuple[str, ...]


def _fmt(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


def _value(raw: str) -> float:
    s = raw.replace("\u00a0", " ").replace("\u202f", " ")
    s = re.sub(r"(?<=\d)[ ,](?=\d{3}(?!\d))", "", s)
    return float(s.replace(",", ".").replace(" ", ""))


def _unit_after(text: str, end: int, start: int) -> str | None:
    """The unit of a number that ends at ``end`` and starts at ``start``: a currency sign right before
    it, or the next word when it is not a stopword."""
    sign = text[max(0, start - 2) : start].strip()[-1:]
    if sign in _CURRENCIES:
        return _CURRENCIES[sign]
    m = _NEXT_WORD_RE.match(text, end)
    if not m or m.group(1).lower() in STOPWORDS or is_negation(m.group(1)):
        return None
    low = m.group(1).lower()
    return next((name for key, name in _CURRENCIES.items() if low.startswith(key) and key.isalpha()), low)


def _blank(m: re.Match[str]) -> str:
    """Spaces for a match: what was read is hidden from the next pattern and offsets stay put."""
    return " " * len(m.group())


def numbers(text: str) -> list[Number]:
    """Every number of ``text`` with its unit: times, digits (with a multiplier word) and number words."""
    text = _LIST_MARKER_RE.sub(_blank, text)
    out = [Number(frozenset({m.group()}), None, m.group()) for m in _TIME_RE.finditer(text)]
    text = _TIME_RE.sub(_blank, text)
    for m in _NUM_RE.finditer(text):
        value = _value(m.group("num"))
        forms = {_fmt(value)}
        suffix, mult = (m.group("suffix") or "").lower(), (m.group("mult") or "").lower()
        if suffix in _MULTIPLIERS or mult:
            forms.add(_fmt(value * _MULTIPLIERS[mult or suffix]))
        unit = suffix if suffix and suffix not in _MULTIPLIERS and suffix not in _ORDINALS else None
        out.append(Number(frozenset(forms), unit or _unit_after(text, m.end(), m.start()), m.group().strip()))
    text = _NUM_RE.sub(_blank, text)
    for m in _PLAIN_RE.finditer(text):
        low = m.group().lower()
        if low in NUMBER_WORDS and (low not in _ONE or _counts(text, m)):
            out.append(Number(frozenset({_fmt(NUMBER_WORDS[low])}), _unit_after(text, m.end(), m.start()), m.group()))
    return out


def _counts(text: str, m: re.Match[str]) -> bool:
    """Whether "one" / "один" at ``m`` is a count ("one boy", "one day trip") rather than a pronoun
    ("this one", "one of them", "one more thing"): no determiner before it, a content word after."""
    before = _PLAIN_RE.findall(text[max(0, m.start() - 20) : m.start()])
    after = _NEXT_WORD_RE.match(text, m.end())
    return (
        (not before or before[-1].lower() not in _DETERMINERS)
        and after is not None
        and after.group(1).lower() not in STOPWORDS
    )


def _stem(word: str) -> str:
    low = word.lower().strip(".'’")
    return low[: min(len(low), max(4, len(low) - 3))]


def _matches(word: str, candidates: list[str]) -> bool:
    """``word`` is among ``candidates`` up to its ending (Russian cases, English plurals)."""
    stem = _stem(word)
    return any(c.startswith(stem) or (len(c) >= 4 and word.lower().startswith(c)) for c in candidates)


def plain_words(text: str) -> list[str]:
    """Lower-case words without punctuation, as ``lexicon.words`` splits them: what the checks compare."""
    return [w.strip("-'’").lower() for w in words(text) if any(c.isalnum() for c in w)]


def _vocabulary(text: str) -> list[str]:
    """Plain words and the parts of hyphenated ones ("oeko-tex" also gives "oeko" and "tex"), so a name
    found inside a compound ("OEKO-TEX", "152-ФЗ") is found again there."""
    out = plain_words(text)
    return out + [p for w in out if "-" in w or "/" in w for p in re.split(r"[-‐–/]", w) if p]


def _content(word: str) -> bool:
    """A word a scope is made of: not a stopword, not a negation, not a number (numbers are facts of
    their own, and "300 000" is one number in two words)."""
    return word[:1].isalpha() and word.lower() not in STOPWORDS and not is_negation(word)


def _clause_words(toks: list[str], start: int, step: int, limit: int) -> list[str]:
    """Up to ``limit`` content words from ``toks[start]`` on, forwards (``step`` 1) or backwards (-1),
    within the clause: a contrast ("but", "но") or a comma that opens a new clause (", because",
    ", потому что") ends it, and so does "and" before a function word ("no car and would like to
    ..."); a comma or "and" inside a list ("large, commercial hotel chains", "peanuts and tree nuts")
    does not."""
    out: list[str] = []
    i = start
    while 0 <= i < len(toks) and len(out) < limit:
        tok = toks[i]
        follower = toks[i + 1].lower() if i + 1 < len(toks) else ""
        if (
            tok.lower() in CONTRASTS
            or (tok == "," and follower in CLAUSE_OPENERS)
            or (tok.lower() in ("and", "or", "и", "или") and follower in STOPWORDS)
        ):
            break
        if _content(tok):
            out.append(tok)
        i += step
    return out if step == 1 else out[::-1]


def scopes(text: str) -> list[Scope]:
    """Every negation and every stated preference of ``text`` with the content words it governs."""
    out: list[Scope] = []
    for sentence in split_sentences(text):
        toks = words(sentence)
        for i, tok in enumerate(toks):
            if is_negation(tok):
                after = _clause_words(toks, i + 1, 1, SCOPE_WORDS)
                before = _clause_words(toks, i - 1, -1, SCOPE_WORDS - len(after)) if len(after) < 2 else []
                out.append(Scope("negation", tok.lower(), tuple(before + after)))
        if sentence.rstrip().endswith("?"):
            continue
        for m in PREFERENCE_RE.finditer(sentence):
            after = _clause_words(words(sentence[m.end() :]), 0, 1, SCOPE_WORDS)
            if after:
                out.append(Scope("preference", m.group().lower(), tuple(after)))
    return out


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


def carries_facts(text: str) -> bool:
    """A number, a negation, a stated preference, a named thing or a hard constraint: a sentence that
    has one is kept whole by the extractive compressor."""
    return bool(numbers(text) or scopes(text) or named_things(text) or hard_constraint_hits(text))


def _unit_kept(unit: str | None, found: str | None) -> bool:
    return unit is None or (found is not None and (found.startswith(_stem(unit)) or unit.startswith(found)))


@dataclass(frozen=True, slots=True)
class Loss:
    """One fact of the source that a candidate loses (or one number it invents)."""

    kind: str  # "number", "negation", "preference", "name"
    reason: str  # "dropped number", "dropped unit", "invented number", "dropped negation", ...
    details: dict


def losses(source: str, candidate: str) -> list[Loss]:
    """Every fact of ``source`` that ``candidate`` loses, and every number it invents, in the order
    of the module docstring."""
    out: list[Loss] = []
    have = numbers(candidate)
    need = numbers(source)
    for number in need:
        same = [n for n in have if n.forms & number.forms]
        if not same:
            out.append(Loss("number", "dropped number", {"missing": number.text}))
        elif not any(_unit_kept(number.unit, n.unit) for n in same):
            out.append(Loss("number", "dropped unit", {"number": number.text, "unit": number.unit}))
    known = {form for number in need for form in number.forms}
    out += [Loss("number", "invented number", {"invented": n.text}) for n in have if not n.forms & known]
    sentences = [(_vocabulary(s), any(is_negation(t) for t in words(s))) for s in split_sentences(candidate)]
    for scope in scopes(source):
        if not any(
            (negated or scope.kind == "preference") and all(_matches(w, plain) for w in scope.words)
            for plain, negated in sentences
        ):
            out.append(
                Loss(scope.kind, f"dropped {scope.kind}", {"trigger": scope.trigger, "scope": list(scope.words)})
            )
    words_have = _vocabulary(candidate)
    out += [Loss("name", "dropped name", {"missing": n}) for n in named_things(source) if not _matches(n, words_have)]
    return out


def check(source: str, candidate: str) -> tuple[str, dict] | None:
    """The first fact of ``source`` that ``candidate`` loses, as ``(reason, details)``; ``None`` when
    it keeps them all (see the module docstring for what each reason means)."""
    found = losses(source, candidate)
    return (found[0].reason, found[0].details) if found else None


def tally(source: str, candidate: str) -> dict[str, tuple[int, int]]:
    """``{kind: (kept, total)}`` over the facts of ``source``: the benchmark's pooled shares."""
    totals = {"number": len(numbers(source)), "negation": 0, "preference": 0, "name": len(named_things(source))}
    for scope in scopes(source):
        totals[scope.kind] += 1
    lost: dict[str, int] = {}
    for loss in losses(source, candidate):
        if loss.reason != "invented number":
            lost[loss.kind] = lost.get(loss.kind, 0) + 1
    return {kind: (total - lost.get(kind, 0), total) for kind, total in totals.items()}


def restates(older: str, newer: str) -> bool:
    """Whether ``newer`` says everything ``older`` says: every fact kept (``check``, invented numbers
    aside, since a restatement may add detail) and every content word of ``older`` found again, by stem.
    What consolidation asks before it sends an older constraint only as a reference to a newer one: a
    similar message about another allergen ("severe peanut allergy" / "severe sesame allergy") is
    never taken for a restatement."""
    if any(loss.reason != "invented number" for loss in losses(older, newer)):
        return False
    have = _vocabulary(newer)
    return all(_matches(w, have) for w in plain_words(older) if _content(w))
