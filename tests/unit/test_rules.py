"""The hard-constraint rule layer: what it flags and what it must not flag (English and Russian)."""

from __future__ import annotations

import pytest

from afm_local.core.types import Utterance
from afm_local.core.vocabulary import Importance
from afm_local.text.rules import RuleClassifier, hard_constraint_hits, is_small_talk


@pytest.mark.parametrize(
    "text, rule",
    [
        ("I'm allergic to peanuts", "allergy"),
        ("The budget is strictly 300k", "strict"),
        ("Submit it no later than Friday", "deadline"),
        ("I'm 7 months along", "condition"),
        ("По закону данные нельзя вывозить", "legal"),
        ("Жена на седьмом месяце", "condition"),
        ("Бюджет жёстко ограничен 200 тысячами", "strict"),
        ("Версия должна выйти не позже 1 декабря", "deadline"),
    ],
)
def test_flags_hard_constraints(text: str, rule: str) -> None:
    assert rule in hard_constraint_hits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Хотелось бы закончить курс до пятницы, если получится.",  # "закончить" is not "закон"
        "Законсервировать огурцы на зиму",
        "Жёсткий диск сломался, что купить?",
        "В прошлом месяце ездили в Казань",
        "I've never been to Lisbon",
    ],
)
def test_does_not_flag_look_alikes(text: str) -> None:
    assert hard_constraint_hits(text) == ()


@pytest.mark.parametrize(
    "text, hits",
    [
        # the absence of a constraint is RELEVANT by the label guide: a negated mention does not count
        ("I don't have any allergies that I know of.", []),
        ("Аллергии у меня нет, ем всё.", []),
        ("We'd like to finish around 11 but it's not strict.", []),
        ("Жёсткого дедлайна нет, заказчик подождёт.", []),
        ("I'm no longer on warfarin.", []),
        # ... but another, plain mention still does, and so do reminders and rules made of negatives
        ("Not allergic to penicillin, but allergic to sulfa drugs.", ["allergy"]),
        ("No peanuts, please: allergy!", ["allergy"]),
        ("Don't forget my insulin.", ["medication"]),
        ("Не забудь про инсулин.", ["medication"]),
        ("I can't go anywhere without my insulin.", ["medication"]),
        ("Деньги с пенсионного счёта не трогаем никогда.", ["strict"]),
        ("It's not legal to store card numbers here.", ["legal"]),
    ],
)
def test_negated_mentions_do_not_count(text: str, hits: list[str]) -> None:
    assert list(hard_constraint_hits(text)) == hits


def test_small_talk_and_rules_alone() -> None:
    assert is_small_talk("thanks, that helps!") and not is_small_talk(
        "thanks, and I'm allergic to sesame, please note it"
    )
    items = [Utterance(t) for t in ("спасибо!", "У меня аллергия на арахис", "Какой отель лучше?")]
    labels = [c.label for c in RuleClassifier().classify(items)]
    assert labels == [Importance.TRIVIAL, Importance.CRITICAL, Importance.RELEVANT]
