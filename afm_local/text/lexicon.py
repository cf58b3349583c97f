"""Word lists and the language rule that every text tool shares, English and Russian.

Kept as data in one place so both components agree on what a filler word, a negation and a
protected token are.
"""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    """
a an the and or but so if then than that this these those there here it its it's i i'm i've i'd
me my mine we we're our ours you you're your yours he she him her his they them their what which
who whom whose when where why how all any both each few more most other some such only own same
too very can will just should would could might may must shall do does did doing done be been
being am is are was were have has had having of at by for with about against between into through
during before after above below to from up down in out on off over under again further once also
as well really quite rather maybe perhaps probably actually basically literally just like lot lots
thing things stuff something anything everything kind sort bit pretty much many get got getting
go going gone went want wanted wanting think thinking thought know knowing guess let lets let's
make made say said tell told please thanks thank hi hello hey okay ok yes yeah yep sure oh um uh
hmm well anyway also still even though although because since while whether via per etc one ones
i'll you'll we'll they'll it'll im ive dont isnt wasnt arent werent near around next across along
beside behind within upon onto toward towards plan planning planned try trying need needs able
visit consider considering interested else
и в во на не что он она оно они мы вы ты я с со как а то все всё так его ее её их мне меня мной
нам нас вам вас им ей ему у же за бы по только от из о об до при для про без над под это этот эта
эти тот та те такой такая такие там тут здесь где когда куда откуда почему зачем как ли или либо
но да нет же вот ну уж ещё еще уже очень просто даже вообще наверное может можно будет быть был
была были есть бывает свой своя свои своё моё мой моя мои твой наш наша наши ваш ваша ваши если
чтобы потому поэтому тоже также ведь кстати типа вроде короче значит лишь сам сама сами самый
который которая которые которое какой какая какие чем чему кто кого кому хочу хотим хотел хотела
думаю думал думала знаю скажи подскажи пожалуйста спасибо привет ладно хорошо окей ага
планируем планирую хотим хотели можем могу нужно надо около рядом возле через после перед
чем-нибудь что-нибудь что-то кто-нибудь кто-то где-нибудь когда-нибудь как-нибудь
""".split()
)

NEGATIONS = frozenset(
    """
no not never none nobody nothing nowhere neither nor without cannot can't don't doesn't didn't
won't wouldn't shouldn't mustn't isn't aren't wasn't weren't haven't hasn't hadn't n't avoid no-one
unable
не нет ни никогда ничего никак нельзя без избегать никаких никакой никакая никакое никакие никого
никому никто нигде никуда нисколько ничем невозможно
""".split()
)

WORD_RE = re.compile(r"[$€£₽]?\d[\d,.:/]*\d[\w%]*|[\w$€£₽%'’\-]+|[^\w\s]", re.UNICODE)
NUMBER_RE = re.compile(r"\d")

# Number words: a spelled-out quantity is a fact like a digit ("two kids", "три ночи", "a few thousand
# dollars"); "one" / "один" only where it counts something (``facts.numbers`` tells "one boy" from
# "this one").
NUMBER_WORDS = {
    w: value
    for value, group in (
        (0, "zero ноль"),
        (1, "one один одна одно одного одной"),
        (2, "two два две двое"),
        (3, "three три трое"),
        (4, "four четыре четверо"),
        (5, "five пять пятеро"),
        (6, "six шесть"),
        (7, "seven семь"),
        (8, "eight восемь"),
        (9, "nine девять"),
        (10, "ten десять"),
        (11, "eleven одиннадцать"),
        (12, "twelve двенадцать"),
        (20, "twenty двадцать"),
        (30, "thirty тридцать"),
        (100, "hundred сто"),
        (1000, "thousand тысяча тысячи тысяч"),
        (1_000_000, "million миллион миллиона миллионов"),
        (1_000_000_000, "billion миллиард"),
    )
    for w in group.split()
}

# Preference and constraint statements: the words after one of these are what the speaker wants,
# needs or refuses, and a shorter form must keep them together ("I avoid staying in large, commercial
# hotel chains", not "I avoid staying in large"). Only statements count: in a question ("Would you
# like ...?") the same words offer rather than state.
PREFERENCE_RE = re.compile(
    r"\b(?:prefer\w*|avoid\w*|wants?|wanted|(?:would|'d|’d) (?:like|love|rather)|needs?|needed|require[sd]?"
    r"|must|ha(?:ve|s) to|hate|dislike|can'?t stand|insist\w*|budget|allergic"
    r"|предпоч\w+|избега\w+|хоч\w*|хоти\w*|хотел\w*|нуж(?:ен|на|но|ны)|надо|должн\w*|ненавиж\w+"
    r"|терпеть не могу|бюджет\w*|аллерги\w+)\b",
    re.IGNORECASE,
)

# Where a clause ends inside a sentence: at a contrast, and at a comma followed by a word that opens a
# new clause. What a negation or a preference governs stays inside its clause ("not after 19:00,
# because he goes to bed early": the reason is not what is negated).
CONTRASTS = frozenset("but however although though whereas но однако хотя зато".split())
CLAUSE_OPENERS = frozenset(
    """
    and but or so because as since which that who whom whose while whereas although though if when unless
    then и но а или поэтому потому так что чтобы который которая которое которые когда если хотя пока ведь
    """.split()
)

# Offers and closings that an assistant turn ends with ("Would you like me to book it?", "Is there
# anything else I can help with?", "Могу ли я ещё чем-нибудь помочь?"): they ask nothing that a later
# turn needs, unlike a question about the subject ("What about the money side?").
OFFER_RE = re.compile(
    r"^\W*(?:(?:so|ok|okay|great|alright|и|так|хорошо),?\s+)?(?:would you like|do you want|would you care|shall i"
    r"|should i|is there anything|anything else|can i help|may i help|how (?:else )?can i help|can i do anything"
    r"|let me know"
    r"|хотите(?: ли)?|желаете(?: ли)?|не хотите ли|могу ли я (?:ещ[её]|чем|вам)|чем ещ[её]|нужно ли (?:вам|ещ[её])"
    r"|что-нибудь ещ[её]|что-то ещ[её]|дайте (?:мне )?знать)\b",
    re.IGNORECASE,
)

# The one sentence splitter: after . ! ? … (and a closing quote or bracket), at line breaks and at
# semicolons; not after an abbreviation or an initial ("Mr. Smith", "e.g. Hilton", "т.е. завтра",
# "J. K. Rowling"), and not before a lower-case letter, which in chat is more often the same
# sentence ("approx. three", "ok. i need") than a new one. A unit too long is safe; a unit cut in
# the middle of a sentence is a fragment.
_BOUNDARY_RE = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"'”»)\]]))\s+|\s*\n+\s*|\s*;\s+")
_ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof st jr sr vs etc e.g i.e eg ie approx no nos vol fig ca cf inc ltd co dept est
    a.m p.m am pm mt ft rd ave blvd
    т.е т.д т.п т.к т.н г гг ул д им др пр см стр руб тыс млн млрд коп кв н.э
    """.split()
)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every sentence of ``text`` (or list item: a line), without surrounding
    space, so a caller can put kept sentences back together with the text that separated them."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY_RE.finditer(text):
        if text[m.start() - 1 : m.start()] in ".…" and _continues(text, m.start(), m.end()):
            continue
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        chunk = text[a:b]
        if chunk.strip():
            a += len(chunk) - len(chunk.lstrip())
            out.append((a, a + len(chunk.strip())))
    return out


def _continues(text: str, stop: int, resume: int) -> bool:
    """A full stop at ``stop`` that does not end the sentence: an abbreviation, an initial, or a
    lower-case letter next."""
    before = text[: stop - 1].rsplit(None, 1)[-1] if text[: stop - 1].strip() else ""
    word = before.lower().lstrip("(\"'«“")
    if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
        return True
    return resume < len(text) and text[resume].islower()


# A parenthetical: the one aside a shorter form may leave out of a sentence and still be that sentence.
PARENTHETICAL_RE = re.compile(r"\s*\([^()]{1,120}\)")


def split_sentences(text: str) -> list[str]:
    """The sentences (and list items) of ``text``, by the one splitter (``sentence_spans``)."""
    return [text[a:b] for a, b in sentence_spans(text)]


_CYRILLIC = re.compile(r"[\u0400-\u04FF]")
_LATIN = re.compile(r"[A-Za-z]")


RUSSIAN_SHARE = 0.3


def letter_counts(text: str) -> tuple[int, int]:
    """Cyrillic and Latin letters of ``text``: what the language rule reads, countable once per message."""
    return len(_CYRILLIC.findall(text)), len(_LATIN.findall(text))


def language_of_counts(cyrillic: int, latin: int) -> str:
    """The one language rule: ``"ru"`` when Cyrillic letters are at least 30% of the letters, else
    ``"en"``. A Russian message keeps English names, code and units, so a majority rule would call
    many Russian messages English; 30% does not (the classifier's per-language weights were chosen
    with this rule)."""
    return "ru" if cyrillic and cyrillic >= RUSSIAN_SHARE * (cyrillic + latin) else "en"


def detect_language(*texts: str) -> str:
    """The language of ``texts`` taken together, by the one rule (``language_of_counts``)."""
    return language_of_counts(*letter_counts(" ".join(texts)))


def words(text: str) -> list[str]:
    """Words and punctuation marks in order, so a pruned sentence can be put back together."""
    return WORD_RE.findall(text)


def is_named(word: str, first: bool) -> bool:
    """A named thing: an acronym, or a capitalised word that does not merely start a sentence."""
    if len(word) >= 2 and word.isupper() and any(c.isalpha() for c in word):
        return True
    return (not first) and word[:1].isupper() and word.lower() not in STOPWORDS


def is_negation(word: str) -> bool:
    low = word.lower().replace("’", "'")
    return low in NEGATIONS or low.endswith("n't")


def is_number(word: str) -> bool:
    return bool(NUMBER_RE.search(word))
