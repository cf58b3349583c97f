#!/usr/bin/env python3
"""Deterministic generator of the AFM importance dataset (English + Russian).

Writes data/importance/{train,validation,test}.jsonl with rows
``{"text", "label", "lang", "domain", "role", "group"}``.

How it works
------------
* Every *core template* (one sentence pattern with slots) is one ``group``. The split is made by group,
  stratified by (lang, label), about 70/15/15, so no core phrasing appears in two splits.
* Slots are filled from per-language filler lists (allergens, amounts, dates, medicines, ...).
* A label-neutral *register* transform is applied at random: lowercase, no final punctuation,
  a typo, a casual lead-in ("btw", "кстати"). The lead-ins are drawn for CRITICAL and RELEVANT alike,
  so they carry no label signal.
* Hand-written lines (one group each) add odd, irregular examples and the known failure
  "Бюджет строго до 300 тысяч рублей." (CRITICAL).
* ``long_messages.jsonl`` (hand-written long messages, one group per message or contrastive pair) is
  read and split with the rest.
* ``chat_*.jsonl`` (hand-written chat messages in many registers, with fact-heavy hard negatives) are
  split by group into train and validation only, after the core split, so the core test split and
  its bytes stay as they were.
* ``new_phrasings*.jsonl`` are NOT read here: they are hand-written held-out sets, reported only.

Run:  python -m scripts.make_importance_data [--seed 13] [--out data/importance]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

C, R, T = "CRITICAL", "RELEVANT", "TRIVIAL"

# --------------------------------------------------------------------------------------------
# Slot fillers
# --------------------------------------------------------------------------------------------
SLOTS: dict[str, dict[str, list[str]]] = {
    "en": {
        "allergen": [
            "peanuts",
            "tree nuts",
            "shellfish",
            "shrimp",
            "sesame",
            "eggs",
            "milk",
            "soy",
            "wheat",
            "penicillin",
            "latex",
            "bee stings",
            "cashews",
            "fish",
            "mustard",
            "kiwi",
        ],
        "food": [
            "spicy food",
            "mushrooms",
            "olives",
            "cilantro",
            "blue cheese",
            "anchovies",
            "eggplant",
            "raw onion",
            "coconut",
            "liver",
            "tofu",
            "pickles",
            "peanuts",
            "shrimp",
        ],
        "relative": [
            "my son",
            "my daughter",
            "my wife",
            "my husband",
            "my mother",
            "my dad",
            "my partner",
            "our youngest",
            "my brother",
            "my grandmother",
        ],
        "amount": [
            "$300",
            "300k",
            "$5,000",
            "€1,200",
            "2,000 dollars",
            "$45k",
            "£800",
            "€50k",
            "1.5 million",
            "$250 per night",
            "15k euros",
            "$900",
            "300,000 rubles",
            "€3,000 a month",
        ],
        "date": [
            "March 15",
            "Friday",
            "the 30th",
            "June 1",
            "end of this month",
            "October 3rd",
            "next Monday",
            "the 12th",
            "December 20",
            "5 pm on Thursday",
            "April 30",
            "Q3",
        ],
        "med": [
            "warfarin",
            "insulin",
            "metformin",
            "lithium",
            "an MAO inhibitor",
            "methotrexate",
            "levothyroxine",
            "blood thinners",
            "prednisone",
            "an SSRI",
            "Eliquis",
            "anticonvulsants",
        ],
        "condition": [
            "type 1 diabetes",
            "epilepsy",
            "celiac disease",
            "severe asthma",
            "a heart condition",
            "kidney disease",
            "hypertension",
            "Crohn's disease",
            "a pacemaker",
            "sickle cell anemia",
        ],
        "city": [
            "Bangkok",
            "Lisbon",
            "Tokyo",
            "Rome",
            "Istanbul",
            "Barcelona",
            "Prague",
            "Dubai",
            "Kyoto",
            "Berlin",
            "Tbilisi",
            "Hanoi",
            "Paris",
            "Vienna",
        ],
        "region": ["the EU", "Germany", "the US", "Russia", "Canada", "the UK", "Switzerland", "Brazil"],
        "reg": ["GDPR", "HIPAA", "152-FZ", "SOX", "PCI DSS", "the AI Act", "CCPA", "export control rules"],
        "tech": [
            "Python",
            "Rust",
            "Postgres",
            "Kubernetes",
            "React",
            "Go",
            "Django",
            "Terraform",
            "Kafka",
            "Redis",
            "TypeScript",
            "FastAPI",
        ],
        "thing": [
            "the API keys",
            "customer emails",
            "production credentials",
            "the signing key",
            "patient records",
            "the payroll file",
            "personal data",
            "the client list",
        ],
        "event": [
            "the wedding",
            "the conference",
            "the birthday party",
            "the team offsite",
            "the graduation",
            "the product launch",
            "the anniversary dinner",
            "the school trip",
            "the workshop",
        ],
        "course": [
            "calculus",
            "the IELTS exam",
            "organic chemistry",
            "the bar exam",
            "statistics",
            "French",
            "the coding bootcamp",
            "the SAT",
            "piano lessons",
            "machine learning",
        ],
        "name": ["Anna", "Mark", "Lena", "Tom", "Sara", "Alex", "Dima", "Kate", "Omar", "Mia"],
        "number": ["2", "3", "4", "5", "6", "8", "10", "12", "20", "40"],
        "weeks": ["8", "12", "16", "20", "24", "28", "32"],
        "diet_reason": [
            "religious reasons",
            "my faith",
            "ethical reasons",
            "our religion",
            "strict kosher rules",
            "halal rules",
            "my beliefs",
        ],
        "meat": ["pork", "beef", "any meat", "alcohol", "gelatin", "shellfish", "animal products"],
        "cuisine": ["Thai", "Italian", "Georgian", "Japanese", "Mexican", "Indian", "Lebanese", "Korean"],
        "emoji": ["", " :)", " 🙂", " 👍", "!", " 😊", " haha", " :D", " 🙏"],
    },
    "ru": {
        "allergen": [
            "арахис",
            "орехи",
            "креветки",
            "морепродукты",
            "кунжут",
            "яйца",
            "молоко",
            "сою",
            "пшеницу",
            "пенициллин",
            "латекс",
            "укусы пчёл",
            "кешью",
            "рыбу",
            "горчицу",
            "киви",
        ],
        "food": [
            "острое",
            "грибы",
            "оливки",
            "кинзу",
            "сыр с плесенью",
            "анчоусы",
            "баклажаны",
            "сырой лук",
            "кокос",
            "печень",
            "тофу",
            "солёные огурцы",
            "арахис",
            "креветки",
        ],
        "relative": [
            "у сына",
            "у дочери",
            "у жены",
            "у мужа",
            "у мамы",
            "у папы",
            "у младшего",
            "у брата",
            "у бабушки",
            "у партнёра",
        ],
        "amount": [
            "300 тысяч рублей",
            "50 000 ₽",
            "2 млн рублей",
            "1200 евро",
            "5000 долларов",
            "45 тысяч",
            "800 фунтов",
            "1,5 миллиона",
            "15 тысяч евро",
            "900 долларов",
            "300 000 рублей",
            "3000 евро в месяц",
            "100 тысяч",
            "7 тысяч рублей за ночь",
        ],
        "date": [
            "15 марта",
            "пятницы",
            "30-го числа",
            "1 июня",
            "конца месяца",
            "3 октября",
            "следующего понедельника",
            "12-го",
            "20 декабря",
            "четверга, 17:00",
            "30 апреля",
            "конца квартала",
        ],
        "med": [
            "варфарин",
            "инсулин",
            "метформин",
            "литий",
            "ингибиторы МАО",
            "метотрексат",
            "L-тироксин",
            "антикоагулянты",
            "преднизолон",
            "антидепрессанты",
            "эликвис",
            "противосудорожные",
        ],
        "condition": [
            "диабет первого типа",
            "эпилепсия",
            "целиакия",
            "тяжёлая астма",
            "порок сердца",
            "болезнь почек",
            "гипертония",
            "болезнь Крона",
            "кардиостимулятор",
            "гемофилия",
        ],
        "city": [
            "Бангкок",
            "Лиссабон",
            "Токио",
            "Рим",
            "Стамбул",
            "Барселону",
            "Прагу",
            "Дубай",
            "Казань",
            "Берлин",
            "Тбилиси",
            "Ханой",
            "Париж",
            "Сочи",
        ],
        "region": ["России", "ЕС", "Германии", "США", "Казахстане", "Европе", "РФ", "Швейцарии"],
        "reg": [
            "152-ФЗ",
            "GDPR",
            "закону о персональных данных",
            "требованиям ЦБ",
            "54-ФЗ",
            "HIPAA",
            "требованиям ФСТЭК",
            "нормам СанПиН",
        ],
        "tech": [
            "Python",
            "Rust",
            "Postgres",
            "Kubernetes",
            "React",
            "Go",
            "Django",
            "Terraform",
            "Kafka",
            "1С",
            "TypeScript",
            "FastAPI",
        ],
        "thing": [
            "API-ключи",
            "пароли от прода",
            "ключ подписи",
            "медкарты пациентов",
            "зарплатную ведомость",
            "персональные данные",
            "базу клиентов",
            "токены доступа",
        ],
        "event": [
            "свадьбу",
            "конференцию",
            "день рождения",
            "корпоратив",
            "выпускной",
            "запуск продукта",
            "юбилей",
            "школьную экскурсию",
            "мастер-класс",
        ],
        "course": [
            "матанализ",
            "ЕГЭ по математике",
            "органическую химию",
            "IELTS",
            "статистику",
            "французский",
            "курсы программирования",
            "ОГЭ",
            "сольфеджио",
            "машинное обучение",
        ],
        "name": ["Аня", "Марк", "Лена", "Тёма", "Саша", "Дима", "Катя", "Олег", "Маша", "Игорь"],
        "number": ["2", "3", "4", "5", "6", "8", "10", "12", "20", "40"],
        "weeks": ["8", "12", "16", "20", "24", "28", "32"],
        "days": ["2 дня", "3 дня", "4 дня", "5 дней", "6 дней", "неделю", "10 дней", "две недели"],
        "meat": [
            "свинину",
            "говядину",
            "мясо",
            "алкоголь",
            "желатин",
            "морепродукты",
            "продукты животного происхождения",
        ],
        "cuisine": ["тайскую", "итальянскую", "грузинскую", "японскую", "мексиканскую", "индийскую", "корейскую"],
        "emoji": ["", " :)", " 🙂", " 👍", "!", " 😊", " ахах", ")))", " 🙏"],
    },
}

# --------------------------------------------------------------------------------------------
# Core templates: (label, domain, role, text). One template = one group.
# --------------------------------------------------------------------------------------------
EN: list[tuple[str, str, str, str]] = [
    # ---- CRITICAL: health / food
    (C, "health", "user", "I'm allergic to {allergen}."),
    (C, "food", "user", "{relative} has a severe {allergen} allergy, even a trace can cause anaphylaxis."),
    (C, "food", "user", "Please make sure nothing on the menu contains {allergen} — I carry an EpiPen for it."),
    (C, "food", "user", "I can't have {allergen} at all, it sends me to the ER."),
    (C, "health", "user", "I take {med} every day, so anything that interacts with it is off the table."),
    (C, "health", "user", "I was diagnosed with {condition} last year."),
    (C, "health", "user", "I'm {weeks} weeks pregnant, so keep that in mind for any recommendation."),
    (C, "health", "user", "My doctor said I must not take ibuprofen while I'm on {med}."),
    (C, "health", "user", "{relative_cap} has {condition}; whatever we plan has to account for that."),
    (C, "food", "user", "I don't eat {meat} for {diet_reason}, no exceptions."),
    (C, "food", "user", "We keep strictly halal, so no {meat} in anything please."),
    (C, "travel", "user", "I use a wheelchair, so every hotel and restaurant has to be step-free."),
    (C, "travel", "user", "My passport expires in two months and {city} requires six months validity."),
    (C, "travel", "user", "Our flight budget is capped at {amount}, we can't spend a cent more."),
    (C, "travel", "user", "We absolutely have to be back home by {date} — the kids start school."),
    (C, "finance", "user", "The budget is strictly {amount}."),
    (C, "finance", "user", "Hard cap: {amount}. Going over is not an option."),
    (C, "finance", "user", "We cannot exceed {amount} under any circumstances."),
    (C, "finance", "user", "My tax return has to be filed by {date} or I pay a penalty."),
    (C, "finance", "user", "Never move money out of the retirement account, it triggers a huge tax hit."),
    (C, "law", "user", "We must keep all customer data in {region}."),
    (C, "law", "user", "Under {reg} we are not allowed to store {thing} outside the country."),
    (C, "law", "user", "Legal says we must not mention competitors by name in the ads."),
    (C, "law", "user", "The contract forbids subcontracting without written approval."),
    (C, "law", "user", "Our licence only covers {number} seats; adding more would breach it."),
    (C, "software", "user", "Never commit {thing} to the repo."),
    (C, "software", "user", "Production must stay on {tech} — the client's security team won't approve anything else."),
    (C, "software", "user", "Do not run migrations on the prod database during business hours, ever."),
    (C, "software", "user", "The release has a hard deadline of {date}; the app store review can't slip."),
    (C, "software", "user", "We can't use any GPL code, it's a closed-source product."),
    (C, "business", "user", "The investors require break-even by {date}, that's written into the term sheet."),
    (C, "business", "user", "Total spend on the pilot must stay under {amount}, the board approved nothing more."),
    (C, "business", "user", "We're not allowed to sell in {region} until the certification is done."),
    (C, "events", "user", "The venue holds {number}0 people max, fire code, no exceptions."),
    (C, "events", "user", "{event} has to be alcohol-free, half the guests don't drink for religious reasons."),
    (C, "events", "user", "Invitations must go out no later than {date}."),
    (C, "family", "user", "{relative_cap} is deathly allergic to {allergen}, so nothing with it in the house."),
    (C, "family", "user", "Our daughter has epilepsy, so no flashing lights at the party."),
    (C, "family", "user", "The custody agreement says the kids can't leave the country without both signatures."),
    (C, "education", "user", "The thesis is due {date} and the university does not grant extensions."),
    (C, "education", "user", "I'm dyslexic and I'm entitled to extra exam time — the plan must include it."),
    (C, "education", "user", "Applications for {course} close on {date}, after that it's a full year wait."),
    # CRITICAL compound: pleasantry + constraint
    (C, "food", "user", "Thanks! Oh and one more thing — I'm allergic to {allergen}."),
    (C, "finance", "user", "Sounds good, but remember the budget is strictly {amount}."),
    # ---- CRITICAL assistant restating
    (C, "food", "assistant", "Noted: you're allergic to {allergen}, so I'll leave out every dish that contains it."),
    (C, "health", "assistant", "Because you take {med}, you should not combine it with St John's wort or grapefruit."),
    (C, "finance", "assistant", "Got it — the hard limit is {amount}, and I'll keep every option below it."),
    (C, "law", "assistant", "Keep in mind that under {reg} you must not transfer {thing} abroad without consent."),
    (C, "software", "assistant", "Reminder: the deadline of {date} is fixed, so I've cut the scope to fit it."),
    (C, "travel", "assistant", "Since you use a wheelchair, I only listed hotels with step-free access."),
    (C, "events", "assistant", "As you said, the event must be alcohol-free, so the bar is mocktails only."),
    # ---- RELEVANT contrastive / soft
    (R, "food", "user", "I don't like {food} much."),
    (R, "food", "user", "Not a huge fan of {food}, but I'll eat it if I have to."),
    (R, "food", "user", "Can you suggest some {cuisine} dishes that are easy to cook at home?"),
    (R, "food", "user", "I'd rather skip {food} if there's another option."),
    (R, "food", "user", "We're thinking of trying {cuisine} food for dinner tonight."),
    (R, "health", "user", "I've been trying to cut down on sugar lately."),
    (R, "health", "user", "What's a good stretching routine after a long run?"),
    (R, "health", "user", "I usually sleep around {number} hours, I'd like to get more."),
    (R, "travel", "user", "What hotels are near the old town in {city}?"),
    (R, "travel", "user", "We're planning {number} days in {city} in spring."),
    (R, "travel", "user", "I'd prefer a window seat if possible."),
    (R, "travel", "user", "Is it worth taking the train from {city} or is flying faster?"),
    (R, "travel", "user", "Our budget for the trip is around {amount}, somewhat flexible."),
    (R, "finance", "user", "Budget around {amount}, flexible."),
    (R, "finance", "user", "We were hoping to spend maybe {amount}, but we could stretch a bit."),
    (R, "finance", "user", "Should I put my savings into index funds or a deposit?"),
    (R, "finance", "user", "Ideally we'd stay near {amount}, though it's not set in stone."),
    (R, "law", "user", "EU hosting would be nice."),
    (R, "law", "user", "Do you know roughly how long trademark registration takes in {region}?"),
    (R, "law", "user", "It might be good to have a lawyer look at the draft at some point."),
    (R, "software", "user", "We're considering {tech} for the backend."),
    (R, "software", "user", "Ideally the release would land by {date}, but it can slip a week."),
    (R, "software", "user", "How do I set up CI for a {tech} project?"),
    (R, "software", "user", "The login page feels slow, maybe we could cache the session lookup."),
    (R, "software", "user", "I'd like the dashboard to have a dark mode eventually."),
    (R, "business", "user", "We want to launch a coffee subscription aimed at students."),
    (R, "business", "user", "Our main competitor charges about {amount} for the same plan."),
    (R, "business", "user", "Could you draft three possible names for the new product line?"),
    (R, "business", "user", "Hiring {number} more people next year would be great if revenue allows."),
    (R, "events", "user", "We're thinking about {event} in early summer, maybe outdoors."),
    (R, "events", "user", "It would be nice to have live music at {event}."),
    (R, "events", "user", "About {number}0 guests, give or take."),
    (R, "family", "user", "{relative_cap} loves dinosaurs, any ideas for a birthday theme?"),
    (R, "family", "user", "We usually visit the grandparents on Sundays."),
    (R, "family", "user", "The kids prefer pasta, but they'll eat most things."),
    (R, "education", "user", "I'm studying for {course} and struggling with the practice problems."),
    (R, "education", "user", "Would it help to make flashcards for {course}?"),
    (R, "education", "user", "I'd like to finish the course by {date} if I can."),
    (R, "health", "user", "I don't have any allergies that I know of."),
    (R, "food", "user", "No dietary restrictions here, I eat everything."),
    # RELEVANT assistant
    (
        R,
        "travel",
        "assistant",
        "You could stay in the riverside district of {city}; it's quiet and close to the metro.",
    ),
    (R, "food", "assistant", "Here are three {cuisine} recipes that take under thirty minutes."),
    (
        R,
        "finance",
        "assistant",
        "One option is to split the budget into fixed costs and a buffer of about ten percent.",
    ),
    (
        R,
        "software",
        "assistant",
        "I'd suggest starting with a small {tech} prototype and measuring latency before committing.",
    ),
    (R, "business", "assistant", "A simple first step would be interviewing ten potential customers."),
    (R, "education", "assistant", "Try spacing your revision for {course} over several short sessions."),
    (R, "events", "assistant", "For {number}0 guests a buffet is usually easier than a seated dinner."),
    (R, "family", "assistant", "A weekend picnic could work well for the whole family."),
    # ---- TRIVIAL
    (T, "general", "user", "thanks{emoji}"),
    (T, "general", "user", "Thank you so much{emoji}"),
    (T, "general", "user", "ok{emoji}"),
    (T, "general", "user", "Got it, thanks{emoji}"),
    (T, "general", "user", "cool cool{emoji}"),
    (T, "general", "user", "Hi there{emoji}"),
    (T, "general", "user", "Good morning, {name}{emoji}"),
    (T, "general", "user", "haha fair enough{emoji}"),
    (T, "general", "user", "Perfect, that's all for now{emoji}"),
    (T, "general", "user", "Sounds good{emoji}"),
    (T, "general", "user", "nice one{emoji}"),
    (T, "general", "user", "Alright, talk later{emoji}"),
    (T, "general", "user", "lol yes{emoji}"),
    (T, "general", "user", "Sorry, I was away for a bit{emoji}"),
    (T, "travel", "user", "Thanks for the hotel tips{emoji}"),
    (T, "food", "user", "Yum, that looks great{emoji}"),
    (T, "software", "user", "Great, thanks for the help with the code{emoji}"),
    (T, "general", "user", "Hmm, let me think about it{emoji}"),
    (T, "general", "assistant", "You're welcome{emoji}"),
    (T, "general", "assistant", "Happy to help{emoji}"),
    (T, "general", "assistant", "Anytime, {name}{emoji}"),
    (T, "general", "assistant", "Glad that worked out{emoji}"),
    (T, "general", "assistant", "Hello! How can I help today?"),
    (T, "general", "assistant", "Have a great day{emoji}"),
]

RU: list[tuple[str, str, str, str]] = [
    # ---- CRITICAL
    (C, "health", "user", "У меня аллергия на {allergen}."),
    (C, "food", "user", "{relative_cap} сильная аллергия на {allergen}, даже следы могут вызвать анафилаксию."),
    (C, "food", "user", "Проследите, пожалуйста, чтобы в меню нигде не было {allergen_gen}: у меня с собой эпипен."),
    (C, "food", "user", "Мне совсем нельзя {allergen}, в прошлый раз увезли на скорой."),
    (C, "health", "user", "Я каждый день принимаю {med}, так что всё, что с этим конфликтует, исключено."),
    (C, "health", "user", "В прошлом году мне поставили диагноз: {condition}."),
    (C, "health", "user", "Я на {weeks}-й неделе беременности, учитывай это во всех советах."),
    (C, "health", "user", "Врач запретил мне ибупрофен, потому что я принимаю {med}."),
    (C, "health", "user", "{relative_cap} {condition}, и всё, что мы планируем, должно это учитывать."),
    (C, "food", "user", "Я не ем {meat} по религиозным соображениям, без исключений."),
    (C, "food", "user", "Мы соблюдаем халяль, поэтому никакого {meat_gen} ни в одном блюде."),
    (C, "travel", "user", "Я передвигаюсь на инвалидной коляске, так что отели и рестораны только без ступенек."),
    (C, "travel", "user", "Паспорт истекает через два месяца, а для въезда нужен запас в полгода."),
    (C, "travel", "user", "На перелёты у нас потолок {amount}, больше ни копейки."),
    (C, "travel", "user", "Нам обязательно нужно вернуться домой до {date}: у детей начинается школа."),
    (C, "finance", "user", "Бюджет строго до {amount}."),
    (C, "finance", "user", "Жёсткий лимит — {amount}, выходить за него нельзя."),
    (C, "finance", "user", "Ни в коем случае не превышать {amount}."),
    (C, "finance", "user", "Декларацию надо подать до {date}, иначе штраф."),
    (C, "finance", "user", "Деньги с пенсионного счёта не трогаем никогда, иначе потеряем налоговый вычет."),
    (C, "law", "user", "Все данные клиентов должны храниться в {region}."),
    (C, "law", "user", "По {reg} нам запрещено хранить {thing} за пределами страны."),
    (C, "law", "user", "Юристы сказали: в рекламе нельзя упоминать конкурентов по названию."),
    (C, "law", "user", "По договору субподряд без письменного согласия заказчика запрещён."),
    (C, "law", "user", "Лицензия покрывает только {number} рабочих мест, больше ставить нельзя."),
    (C, "software", "user", "Никогда не коммить {thing} в репозиторий."),
    (C, "software", "user", "Прод должен остаться на {tech}, служба безопасности заказчика другое не согласует."),
    (C, "software", "user", "Миграции на боевой базе в рабочее время не запускаем, ни при каких условиях."),
    (C, "software", "user", "У релиза жёсткий дедлайн — до {date}, сдвигать нельзя."),
    (C, "software", "user", "Код под GPL использовать нельзя: продукт закрытый."),
    (C, "business", "user", "Инвесторы требуют выйти в ноль до {date}, это прописано в соглашении."),
    (C, "business", "user", "Расходы на пилот не должны превысить {amount}, совет директоров больше не утвердил."),
    (C, "business", "user", "Продавать в {region} нам нельзя, пока не получим сертификат."),
    (C, "events", "user", "Зал вмещает максимум {number}0 человек по пожарным нормам, без исключений."),
    (C, "events", "user", "Праздник должен быть без алкоголя: половина гостей не пьёт по религиозным причинам."),
    (C, "events", "user", "Приглашения нужно разослать не позднее {date}."),
    (C, "family", "user", "{relative_cap} смертельная аллергия на {allergen}, так что дома этого быть не должно."),
    (C, "family", "user", "У дочки эпилепсия, поэтому на празднике никаких мигающих огней."),
    (C, "family", "user", "По соглашению об опеке дети не могут выезжать из страны без согласия обоих родителей."),
    (C, "education", "user", "Диплом сдать до {date}, университет отсрочек не даёт."),
    (
        C,
        "education",
        "user",
        "У меня дислексия, и мне положено дополнительное время на экзамене — это обязательно учесть.",
    ),
    (C, "education", "user", "Приём заявок на {course} закрывается {date_nom}, потом ждать целый год."),
    (C, "food", "user", "Спасибо! И ещё важное: у меня аллергия на {allergen}."),
    (C, "finance", "user", "Хорошо, но помни: бюджет строго {amount}, не больше."),
    # CRITICAL assistant
    (C, "food", "assistant", "Учту: у вас аллергия на {allergen}, поэтому все блюда с этим я убрал."),
    (C, "health", "assistant", "Раз вы принимаете {med}, сочетать его со зверобоем или грейпфрутом нельзя."),
    (C, "finance", "assistant", "Понял, жёсткий лимит — {amount}, все варианты будут ниже."),
    (C, "law", "assistant", "Помните, что по {reg} передавать {thing} за границу без согласия запрещено."),
    (C, "software", "assistant", "Напоминаю: срок до {date} фиксированный, поэтому я урезал объём работ."),
    (C, "travel", "assistant", "Поскольку вы на коляске, я оставил только отели с доступной средой."),
    (
        C,
        "events",
        "assistant",
        "Как вы и сказали, мероприятие без алкоголя, в баре будут только безалкогольные коктейли.",
    ),
    # ---- RELEVANT
    (R, "food", "user", "Я не очень люблю {food}."),
    (R, "food", "user", "{food_cap} — не моё, но если надо, съем."),
    (R, "food", "user", "Подскажи пару блюд, которые легко приготовить дома, хочется {cuisine} кухню."),
    (R, "food", "user", "Если есть вариант без {food_gen}, я бы выбрал его."),
    (R, "food", "user", "Сегодня вечером думаем попробовать {cuisine} кухню."),
    (R, "health", "user", "Последнее время стараюсь есть поменьше сладкого."),
    (R, "health", "user", "Какую растяжку лучше делать после долгой пробежки?"),
    (R, "health", "user", "Обычно сплю часов {number}, хотелось бы больше."),
    (R, "travel", "user", "Какие отели есть рядом со старым городом, если едем в {city}?"),
    (R, "travel", "user", "Планируем {days} поездки в {city} весной."),
    (R, "travel", "user", "По возможности хочу место у окна."),
    (R, "travel", "user", "Стоит ехать поездом или самолётом быстрее?"),
    (R, "travel", "user", "На поездку закладываем примерно {amount}, можно чуть больше."),
    (R, "finance", "user", "Бюджет около {amount}, гибкий."),
    (R, "finance", "user", "Думали потратить где-то {amount}, но можем немного выйти за рамки."),
    (R, "finance", "user", "Куда лучше положить сбережения: в индексный фонд или на вклад?"),
    (R, "finance", "user", "Хорошо бы уложиться примерно в {amount}, но это не догма."),
    (R, "law", "user", "Было бы неплохо хостить всё в Европе."),
    (R, "law", "user", "Сколько примерно занимает регистрация товарного знака в {region}?"),
    (R, "law", "user", "Может, стоит потом показать черновик юристу."),
    (R, "software", "user", "Рассматриваем {tech} для бэкенда."),
    (R, "software", "user", "Хотелось бы выпустить релиз до {date}, но можно и на неделю позже."),
    (R, "software", "user", "Как настроить CI для проекта на {tech}?"),
    (R, "software", "user", "Страница входа тормозит, может, закэшировать проверку сессии?"),
    (R, "software", "user", "Когда-нибудь хотелось бы тёмную тему в дашборде."),
    (R, "business", "user", "Хотим запустить подписку на кофе для студентов."),
    (R, "business", "user", "Главный конкурент берёт около {amount} за такой же тариф."),
    (R, "business", "user", "Придумай три варианта названия для новой линейки."),
    (R, "business", "user", "Было бы здорово нанять ещё {number} человек в следующем году, если выручка позволит."),
    (R, "events", "user", "Думаем устроить {event} в начале лета, может, на улице."),
    (R, "events", "user", "Хорошо бы живую музыку на праздник."),
    (R, "events", "user", "Гостей будет около {number}0, плюс-минус."),
    (R, "family", "user", "Сын обожает динозавров, есть идеи для темы дня рождения?"),
    (R, "family", "user", "По воскресеньям мы обычно ездим к бабушке с дедушкой."),
    (R, "family", "user", "Дети больше любят макароны, но едят почти всё."),
    (R, "education", "user", "Готовлюсь сдавать {course}, не получается решать задачи из пробника."),
    (R, "education", "user", "Есть смысл сделать карточки, чтобы учить {course}?"),
    (R, "education", "user", "Хотелось бы закончить курс до {date}, если получится."),
    (R, "health", "user", "Аллергий, насколько я знаю, у меня нет."),
    (R, "food", "user", "Ограничений по еде нет, ем всё."),
    # RELEVANT assistant
    (R, "travel", "assistant", "Можно остановиться у реки: там тихо и близко к метро."),
    (R, "food", "assistant", "Вот три рецепта, которые готовятся меньше чем за полчаса."),
    (
        R,
        "finance",
        "assistant",
        "Как вариант, разделите бюджет на обязательные расходы и запас примерно в десять процентов.",
    ),
    (R, "software", "assistant", "Предлагаю начать с небольшого прототипа на {tech} и замерить задержки."),
    (R, "business", "assistant", "Для начала можно поговорить с десятью потенциальными клиентами."),
    (R, "education", "assistant", "Попробуйте повторять материал короткими подходами по 20 минут."),
    (R, "events", "assistant", "Для {number}0 гостей фуршет обычно проще, чем банкет с рассадкой."),
    (R, "family", "assistant", "Пикник на выходных может понравиться всей семье."),
    # ---- TRIVIAL
    (T, "general", "user", "спасибо{emoji}"),
    (T, "general", "user", "Огромное спасибо{emoji}"),
    (T, "general", "user", "ок{emoji}"),
    (T, "general", "user", "Понял, спасибо{emoji}"),
    (T, "general", "user", "класс{emoji}"),
    (T, "general", "user", "Привет{emoji}"),
    (T, "general", "user", "Доброе утро, {name}{emoji}"),
    (T, "general", "user", "ахах, логично{emoji}"),
    (T, "general", "user", "Отлично, пока всё{emoji}"),
    (T, "general", "user", "Звучит хорошо{emoji}"),
    (T, "general", "user", "норм{emoji}"),
    (T, "general", "user", "Ладно, потом спишемся{emoji}"),
    (T, "general", "user", "ага, точно{emoji}"),
    (T, "general", "user", "Извини, отходил ненадолго{emoji}"),
    (T, "travel", "user", "Спасибо за советы по отелям{emoji}"),
    (T, "food", "user", "Ммм, выглядит вкусно{emoji}"),
    (T, "software", "user", "Супер, спасибо за помощь с кодом{emoji}"),
    (T, "general", "user", "Хм, дай подумать{emoji}"),
    (T, "general", "assistant", "Пожалуйста{emoji}"),
    (T, "general", "assistant", "Рад помочь{emoji}"),
    (T, "general", "assistant", "Обращайтесь, {name}{emoji}"),
    (T, "general", "assistant", "Здорово, что получилось{emoji}"),
    (T, "general", "assistant", "Здравствуйте! Чем могу помочь?"),
    (T, "general", "assistant", "Хорошего дня{emoji}"),
]

# Derived Russian slot forms (genitive etc.).
RU_GEN = {
    "арахис": "арахиса",
    "орехи": "орехов",
    "креветки": "креветок",
    "морепродукты": "морепродуктов",
    "кунжут": "кунжута",
    "яйца": "яиц",
    "молоко": "молока",
    "сою": "сои",
    "пшеницу": "пшеницы",
    "пенициллин": "пенициллина",
    "латекс": "латекса",
    "укусы пчёл": "продуктов пчеловодства",
    "кешью": "кешью",
    "рыбу": "рыбы",
    "горчицу": "горчицы",
    "киви": "киви",
    "острое": "острого",
    "грибы": "грибов",
    "оливки": "оливок",
    "кинзу": "кинзы",
    "сыр с плесенью": "сыра с плесенью",
    "анчоусы": "анчоусов",
    "баклажаны": "баклажанов",
    "сырой лук": "сырого лука",
    "кокос": "кокоса",
    "печень": "печени",
    "тофу": "тофу",
    "солёные огурцы": "солёных огурцов",
    "свинину": "свинины",
    "говядину": "говядины",
    "мясо": "мяса",
    "алкоголь": "алкоголя",
    "желатин": "желатина",
    "продукты животного происхождения": "продуктов животного происхождения",
}
RU_NOM = {
    "рыбу": "рыба",
    "сою": "соя",
    "пшеницу": "пшеница",
    "кинзу": "кинза",
    "горчицу": "горчица",
    "острое": "острое",
    "свинину": "свинина",
    "говядину": "говядина",
}
RU_DATE_NOM = {
    "пятницы": "в пятницу",
    "конца месяца": "в конце месяца",
    "следующего понедельника": "в следующий понедельник",
    "четверга, 17:00": "в четверг в 17:00",
    "конца квартала": "в конце квартала",
    "30-го числа": "30-го числа",
    "12-го": "12-го",
}

# Hand-written irregular lines (one group each).
HAND: list[tuple[str, str, str, str, str]] = [
    ("ru", C, "finance", "user", "Бюджет строго до 300 тысяч рублей."),
    ("ru", R, "finance", "user", "Бюджет примерно 300 тысяч рублей, можно чуть больше."),
    ("ru", C, "health", "user", "аллергия на орехи у ребенка, имейте в виду"),
    ("ru", R, "food", "user", "орехи не особо люблю но не страшно"),
    ("ru", C, "software", "user", "данные только в РФ, 152-ФЗ, это не обсуждается"),
    ("ru", R, "software", "user", "хостинг в РФ был бы плюсом"),
    ("ru", C, "law", "user", "Без подписи директора договор не отправлять."),
    ("ru", T, "general", "user", "спс)"),
    ("ru", T, "general", "user", "ну ок"),
    ("ru", C, "health", "user", "Маме после инсульта нельзя летать дольше трёх часов."),
    ("ru", R, "travel", "user", "Маме тяжело в долгих перелётах, лучше покороче, если получится."),
    ("ru", C, "events", "user", "Свадьба 14 июня, дату уже не перенести: зал оплачен."),
    ("ru", R, "events", "user", "Свадьбу думаем где-то в июне, дата пока плавает."),
    ("ru", C, "family", "user", "Сыну нельзя сладкое вообще — диабет."),
    ("ru", R, "family", "user", "Сыну стараемся давать поменьше сладкого."),
    ("ru", C, "education", "user", "Если не сдам до пятницы — отчислят."),
    ("ru", R, "education", "user", "Хорошо бы сдать до пятницы, но можно и позже."),
    ("en", C, "finance", "user", "budget is 300k MAX, not negotiable"),
    ("en", R, "finance", "user", "budget is like 300k-ish, can flex"),
    ("en", C, "health", "user", "my kid has a nut allergy, pls keep that in mind"),
    ("en", R, "food", "user", "nuts aren't really my thing tbh"),
    ("en", C, "software", "user", "data must stay in the EU, legal requirement"),
    ("en", R, "software", "user", "EU region would be a plus"),
    ("en", C, "law", "user", "Do not send the contract without the director's signature."),
    ("en", T, "general", "user", "thx!!"),
    ("en", T, "general", "user", "k"),
    ("en", C, "health", "user", "Mum had a stroke, she can't fly more than three hours."),
    ("en", R, "travel", "user", "Mum finds long flights tiring, shorter would be better if possible."),
    ("en", C, "events", "user", "The wedding is June 14 and the date can't move, the venue is paid."),
    ("en", R, "events", "user", "We're thinking of a June wedding, date still open."),
    ("en", C, "family", "user", "My son can't have any sugar at all — he's diabetic."),
    ("en", R, "family", "user", "We try to give our son less sugar."),
    ("en", C, "education", "user", "If I don't submit by Friday I get expelled."),
    ("en", R, "education", "user", "It would be nice to submit by Friday, but later is fine too."),
]

LEADS = {
    "en": ["btw ", "oh and ", "also, ", "just so you know, ", "fyi ", "one thing: ", "quick note: ", "ok so "],
    "ru": [
        "кстати, ",
        "и ещё: ",
        "просто чтобы ты знал, ",
        "к слову, ",
        "на всякий случай: ",
        "так вот, ",
        "слушай, ",
        "в общем, ",
    ],
}
TYPO_SWAPS = {
    "en": [("the", "teh"), ("you", "u"), ("please", "pls"), ("because", "bc"), ("and", "&")],
    "ru": [("что", "што"), ("сейчас", "щас"), ("пожалуйста", "пожалуйста"), ("тебе", "те"), ("спасибо", "спс")],
}


def _fill(lang: str, template: str, rng: random.Random) -> str:
    slots = SLOTS[lang]

    def pick(name: str) -> str:
        if name == "relative_cap":
            v = rng.choice(slots["relative"])
            return v[0].upper() + v[1:]
        if name == "food_cap":
            v = rng.choice(slots["food"])
            v = RU_NOM.get(v, v)
            return v[0].upper() + v[1:]
        if name == "allergen_gen":
            return RU_GEN[rng.choice(slots["allergen"])]
        if name == "food_gen":
            return RU_GEN[rng.choice(slots["food"])]
        if name == "meat_gen":
            return RU_GEN[rng.choice(slots["meat"])]
        if name == "date_nom":
            v = rng.choice(slots["date"])
            return RU_DATE_NOM.get(v, v)
        if name == "diet_reason":
            return rng.choice(slots["diet_reason"])
        return rng.choice(slots[name])

    return re.sub(r"\{(\w+)\}", lambda m: pick(m.group(1)), template)


def _register(lang: str, label: str, text: str, rng: random.Random) -> str:
    """Label-neutral surface variation."""
    r = rng.random()
    if label != T and r < 0.12:
        lead = rng.choice(LEADS[lang])
        text = lead + text[0].lower() + text[1:]
    r = rng.random()
    if r < 0.18:
        text = text.lower()
    r = rng.random()
    if r < 0.2:
        text = text.rstrip(".!")
    r = rng.random()
    if r < 0.08:
        a, b = rng.choice(TYPO_SWAPS[lang])
        text = re.sub(rf"\b{a}\b", b, text, count=1)
    r = rng.random()
    if r < 0.05 and len(text) > 12:  # dropped character typo
        i = rng.randrange(3, len(text) - 2)
        if text[i].isalpha():
            text = text[:i] + text[i + 1 :]
    return text.strip()


DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "importance"
LONG_MESSAGES = DATA_DIR / "long_messages.jsonl"
KEYS = ("text", "label", "lang", "domain", "role", "group")


def generate(seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows: list[dict] = []
    per_label = {C: 16, R: 14, T: 11}
    for lang, table in (("en", EN), ("ru", RU)):
        for i, (label, domain, role, tpl) in enumerate(table):
            group = f"{lang}-{label[:4].lower()}-{domain}-{i:03d}"
            n = per_label[label]
            seen: set[str] = set()
            tries = 0
            while len(seen) < n and tries < n * 8:
                tries += 1
                text = _register(lang, label, _fill(lang, tpl, rng), rng)
                if text in seen:
                    continue
                seen.add(text)
                rows.append(
                    {"text": text, "label": label, "lang": lang, "domain": domain, "role": role, "group": group}
                )
    for j, (lang, label, domain, role, text) in enumerate(HAND):
        rows.append(
            {
                "text": text,
                "label": label,
                "lang": lang,
                "domain": domain,
                "role": role,
                "group": f"hand-{lang}-{j:03d}",
            }
        )
    rows += load_long_messages()
    return rows


def load_long_messages() -> list[dict]:
    """Long, mostly hand-written messages (25-120 words; see docs/data_card.md), one group per message
    or contrastive pair. Without them the model learned "long and full of facts" as CRITICAL."""
    return _read_rows(LONG_MESSAGES) if LONG_MESSAGES.is_file() else []


def load_chat_messages() -> list[dict]:
    """Hand-written chat messages (``chat_*.jsonl``), added after the first two models: real chats
    are full of schedules, prices and fact-heavy answers that are RELEVANT, and of constraints said
    in passing, in lists or in questions. Each file is checked, so a typo in a label fails here."""
    rows: list[dict] = []
    for path in sorted(DATA_DIR.glob("chat_*.jsonl")):
        for n, r in enumerate(_read_rows(path), 1):
            if r["label"] not in (C, R, T) or r["lang"] not in ("en", "ru") or r["role"] not in ("user", "assistant"):
                raise SystemExit(f"{path.name}:{n}: bad label, lang or role in {r}")
            rows.append(r)
    return rows


def _read_rows(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{k: r[k] for k in KEYS} for r in rows]


def split(rows: list[dict], seed: int, test_share: float = 0.15) -> dict[str, list[dict]]:
    """Group split, stratified by (lang, label): 15% of the groups of each (lang, label) to validation,
    ``test_share`` to test, the rest to train. A group whose rows carry two labels (a contrastive pair)
    takes the assignment of the last (lang, label) it is drawn in, so both halves land in one split."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in rows:
        key = (r["lang"], r["label"])
        if r["group"] not in groups[key]:
            groups[key].append(r["group"])
    assign: dict[str, str] = {}
    rng = random.Random(seed + 1)
    for key in sorted(groups):
        gs = sorted(groups[key])
        rng.shuffle(gs)
        n = len(gs)
        n_val = max(1, round(0.15 * n))
        n_test = max(1, round(test_share * n)) if test_share else 0
        for k, g in enumerate(gs):
            assign[g] = "validation" if k < n_val else "test" if k < n_val + n_test else "train"
    out: dict[str, list[dict]] = {"train": [], "validation": [], "test": []}
    for r in rows:
        out[assign[r["group"]]].append(r)
    for v in out.values():
        rng.shuffle(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "importance")
    args = ap.parse_args()
    rows = generate(args.seed)
    splits = split(rows, args.seed)
    chat = load_chat_messages()
    for name, part in split(chat, args.seed + 100, test_share=0.0).items():
        splits[name] += part
    rows += chat
    args.out.mkdir(parents=True, exist_ok=True)
    for name, part in splits.items():
        path = args.out / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for r in part:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        cnt = Counter((r["lang"], r["label"]) for r in part)
        print(
            f"{name:10s} {len(part):5d} rows  groups={len({r['group'] for r in part}):3d}  sha256={digest}  "
            + " ".join(f"{k[0]}/{k[1][:4]}={v}" for k, v in sorted(cnt.items()))
        )
    print(f"total {len(rows)} rows")


if __name__ == "__main__":
    main()
