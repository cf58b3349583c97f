"""A transparent rule layer for hard constraints, in English and Russian.

This is a safety net, not the classifier: it only ever *raises* a message to CRITICAL when it names
an allergy, a medication, a legal limit or a strict cap, and it recognises obvious small talk. It
stands alone as the fallback when no trained model is installed, and on top of the model otherwise.
Every pattern is listed here so a user can read exactly why a message was flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..core.types import Classification, Utterance
from ..core.vocabulary import Importance

# Each entry: (name, pattern). Patterns are case-insensitive and match word stems.
HARD_CONSTRAINT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("allergy", r"\ballerg\w*|\banaphyla\w*|\bepipen\b|аллерг\w*|анафилак\w*"),
    ("intolerance", r"\bintoleran\w*|\bceliac\b|\bcoeliac\b|непереносим\w*|целиаки\w*"),
    (
        "medication",
        r"\bmedication\w*|\bprescri\w*|\bwarfarin\b|\binsulin\b|\bdosage\b|\bmg\b|\bblood thinner\w*"
        r"|\banticoagulant\w*|\banticonvulsant\w*"
        r"|лекарств\w*|препарат\w*|варфарин\w*|инсулин\w*|дозиров\w*|\bмг\b|назначил\w*"
        r"|антикоагулянт\w*|противосудорожн\w*",
    ),
    (
        "condition",
        r"\bdiabet\w*|\bepilep\w*|\bpregnan\w*|\bwheelchair\b|\bdisabilit\w*|\bdiagnos\w*|\basthma\w*"
        # "7 months along", not "a week along the coast"
        r"|\b(?:months?|weeks?) along\b(?!\s+(?:the|a|an|this|that|our|its)\b)"
        r"|диабет\w*|эпилеп\w*|беремен\w*|инвалид\w*|диагноз\w*|астм\w*|коляск\w*"
        # "на седьмом месяце", "на 7-м месяце": how Russian says "seven months pregnant"
        r"|\bна (?:\w+ом|\d+(?:-?м)?) месяце\b",
    ),
    (
        "legal",
        r"\billegal\w*|\blegal(?:ly)?\b|\bcomplian\w*|\bgdpr\b|\bhipaa\b|\bregulat\w*|\blicen[cs]e\w*"
        # "закон..." but not "закончить" (to finish), "законспектировать", "законсервировать"
        r"|незаконн\w*|\bзакон(?!ч|спект|серв)\w*|юридич\w*|лицензи\w*|152-фз",
    ),
    (
        "strict",
        r"\bstrict(?:ly)?\b|\bno more than\b|\bat most\b|\bnot exceed\w*|\bmust not\b|\bmustn'?t\b"
        r"|\bnever\b(?! (?:been|heard|seen|tried|mind|thought|knew|visited))|\bunder no circumstances\b"
        r"|\bnon-negotiable\b|\bhard (?:limit|cap|deadline)\b"
        r"|\bforbidden\b|\bprohibit\w*|\bnot allowed\b|\bcannot exceed\b"
        r"|строго\b|не более\b|не больше\b|не должн\w*|нельзя\b|ни при каких\b|запрет\w*"
        r"|никогда\b(?! не (?:был|слышал|видел|пробовал))|ни в коем случае"
        r"|запрещ\w*|не превыша\w*|категорически|ж[её]стк\w* (?:лимит|срок|дедлайн|ограничен|бюджет|потол)\w*"
        r"|ограничен\w* ж[её]стко",
    ),
    ("diet", r"\bvegan\b|\bhalal\b|\bkosher\b|\bгаляль\w*|\bхаляль\w*|\bкошерн\w*|\bвеган\w*"),
    (
        "deadline",
        r"\bdeadline\b|\bno later than\b|\bno extensions?\b"
        r"|крайний срок|дедлайн\w*|не позднее|не позже\b|отсрочек не|без отсрочек",
    ),
)

SMALL_TALK_PATTERN = (
    r"^\W*(?:thanks?|thank you|thx|ok(?:ay)?|cool|great|nice|awesome|perfect|sounds good|got it|sure"
    r"|hi|hello|hey|bye|good (?:morning|night|evening)|lol|haha|yes|no|yep|nope"
    r"|спасибо|благодарю|ок|окей|хорошо|отлично|супер|класс|понятно|ясно|привет|пока|ага|да|нет"
    r"|здравствуйте|добрый (?:день|вечер)|спс)\b[\w\s,!.)(:-]{0,30}$"
)

# A mention that is negated names the *absence* of a constraint ("I don't have any allergies", "it's
# not strict", "жёстких дедлайнов нет"), which the label guide calls RELEVANT. These categories name a
# thing the user has; a negator at most two words before a match in the same clause, or a bare
# "нет" / "none" just after it, voids that match. "legal" is left out ("it's not legal to ..." is
# itself a limit), and so are "without" and "без" ("I can't go without my insulin").
NEGATABLE = frozenset({"allergy", "intolerance", "medication", "condition", "strict", "diet", "deadline"})
_NEGATED_BEFORE = re.compile(
    r"(?:^|\s)(?:not|no|don'?t|doesn'?t|didn'?t|isn'?t|aren'?t|wasn'?t|haven'?t|hasn'?t|не|нет|ни)"
    r"(?!\s+(?:forget|забу))(?:\s+[^\s.,;:!?()\[\]—–]+){0,2}\s*$",  # "don't forget my insulin" is a reminder
    re.IGNORECASE,
)
_NEGATED_AFTER = re.compile(r"^(?:\s+[^\s.,;:!?()\[\]—–]+){0,2}\s*(?:[:—–-]\s*)?(?:нет|none)\b", re.IGNORECASE)
_HARD = [(name, re.compile(pat, re.IGNORECASE)) for name, pat in HARD_CONSTRAINT_PATTERNS]
_SMALL_TALK = re.compile(SMALL_TALK_PATTERN, re.IGNORECASE)


def _negated(text: str, match: re.Match[str]) -> bool:
    """True when the match sits right after a negator in its clause, or right before "нет" / "none".

    A match that is itself negative ("never", "no later than", "нельзя", "никогда") is never voided:
    Russian doubles its negatives ("не трогаем никогда" is a rule, not its absence)."""
    if match.group(0).lower().startswith(("no", "ne", "не", "ни")):
        return False
    start, end = match.start(), match.end()
    return bool(_NEGATED_BEFORE.search(text, max(0, start - 80), start) or _NEGATED_AFTER.match(text[end : end + 60]))


@lru_cache(maxsize=4096)
def hard_constraint_hits(text: str) -> tuple[str, ...]:
    """Names of the hard-constraint patterns that ``text`` matches, in table order.

    A category counts when at least one of its matches is not negated (see ``NEGATABLE``), so "not
    allergic to penicillin, but allergic to sulfa" still hits. The scan runs once per text: ingest asks
    for it from the classifier's features and from the compressor's fact check of the same message."""
    return tuple(
        name
        for name, pattern in _HARD
        if any(name not in NEGATABLE or not _negated(text, m) for m in pattern.finditer(text))
    )


def is_small_talk(text: str) -> bool:
    """Short pleasantries and acknowledgements with no content of their own."""
    return bool(_SMALL_TALK.match(text.strip())) and len(text.split()) <= 8


class RuleClassifier:
    """Rules only: CRITICAL on a hard-constraint hit, TRIVIAL on small talk, RELEVANT otherwise."""

    name = "rules"

    def classify(self, items: Sequence[Utterance]) -> list[Classification]:
        out = []
        for text in (item.text for item in items):
            if hard_constraint_hits(text):
                label = Importance.CRITICAL
            elif is_small_talk(text):
                label = Importance.TRIVIAL
            else:
                label = Importance.RELEVANT
            out.append(Classification(label, {label.value: 1.0}, "rule"))
        return out
