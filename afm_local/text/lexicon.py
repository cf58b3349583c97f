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
visit consider considering interested
и в во на не что он она оно они мы вы ты я с со как а то все всё так его ее её их мне меня мной
нам нас вам вас им ей ему у же за бы по только от из о об до при для про без над под это этот эта
эти тот та те такой такая такие там тут здесь где когда куда откуда почему зачем как ли или либо
но да нет же вот ну уж ещё еще уже очень просто даже вообще наверное может можно будет быть был
была были есть бывает свой своя свои своё моё мой моя мои твой наш наша наши ваш ваша ваши если
чтобы потому поэтому тоже также ведь кстати типа вроде короче значит лишь сам сама сами самый
который которая которые которое какой какая какие чем чему кто кого кому хочу хотим хотел хотела
думаю думал думала знаю скажи подскажи пожалуйста спасибо привет ладно хорошо окей ага
планируем планирую хотим хотели можем могу нужно надо около рядом возле через после перед
""".split()
)

NEGATIONS = frozenset(
    """
no not never none nobody nothing nowhere neither nor without cannot can't don't doesn't didn't
won't wouldn't shouldn't mustn't isn't aren't wasn't weren't haven't hasn't hadn't n't avoid
не нет ни никогда ничего никак нельзя без избегать
""".split()
)

WORD_RE = re.compile(r"[$€£₽]?\d[\d,.:/]*\d[\w%]*|[\w$€£₽%'’\-]+|[^\w\s]", re.UNICODE)
NUMBER_RE = re.compile(r"\d")
SENTENCE_RE = re.compile(r"(?<=[.!?…])\s+|\s*\n+\s*|\s*;\s+")
CLAUSE_RE = re.compile(r"(?<!\d),\s*|:\s+|\s+(?=(?:but|however|although|though|while|но|однако|хотя|а)\s)", re.IGNORECASE)

# Function words that carry meaning in a constraint and must survive pruning ("no more than 300k",
# "at least 2 rooms", "only legal advice"), though they are stopwords for topic naming.
MEANING_WORDS = frozenset(
    """
at more less most least than only all any every each few lot lots much many same other before after
until within under over above below per both either neither must should
более менее больше меньше чем только все всё каждый каждая любой много мало до после минимум максимум
""".split()
)


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


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """Like ``words`` but with character offsets, to tell which words a pattern match covers."""
    return [(m.group(), m.start(), m.end()) for m in WORD_RE.finditer(text)]


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
