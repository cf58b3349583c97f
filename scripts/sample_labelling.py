"""Sample real third-party chat turns for importance labelling, split by dialogue.

    python -m scripts.sample_labelling --out /path/outside/the/repo [--seed 20261204]

Three pools; the first two are mixed at random in the batches so annotators cannot tell them apart:

* ``random``: turns drawn at random from whole dialogues of every corpus (quotas below), the
  figure a user sees: how often ordinary turns are flagged;
* ``candidate``: first-person turns by a person (users; both sides where both are people) that a broad \
word list (English and Russian: allergies, health, diets,
  "can't", "never", "avoid", "prefer", budgets, deadlines, ...) marks as possibly stating a
  constraint or preference. Constraints are rare in real chat; this pool is where the held-out
  constraint statements for the recall figure come from. Being selected by words, it favours
  constraints that use such words; docs/data_card.md says so.
* ``dense`` (a second wave, group 5): the first two pools held few constraints (about 2.6% of the
  turns), so a narrower list of strong signals (named conditions, diets, "I can't stand", "I never
  eat", "мне нельзя", ...) draws more first-person turns by a person, none sampled before.

Every dialogue goes to exactly one split (train / dev / test, by a hash of its id), so no dialogue
is split across training and testing; a MultiWOZ dialogue appears in English or in its Russian
machine translation, never both. Writes ``data/real/items.jsonl`` (ids, roles, splits and pools, no
text: this is what the repository keeps) and, under ``--out``, the annotators' batch files with the
text (never committed).
"""

from __future__ import annotations

import json
import random
import re

from scripts.common import ROOT
from scripts.corpora import Turn, dialogues, family, split_of
from scripts.labelling import CANDIDATE_RE, FIRST_PERSON_RE, SHOW_CHARS, eligible, item_row, sample_args, write_batches

ITEMS = ROOT / "data" / "real" / "items.jsonl"
QUOTAS = {  # random pool, items per corpus (MultiWOZ shared between its English and Russian files)
    "oasst_en100": 313,
    "dolly_subset": 302,
    "hh_rlhf_harmless_test": 500,
    "topical_chat": 500,
    "casino": 500,
    "multiwoz": 800,
    "sgd": 300,
    "taskmaster4": 250,
    "ru_anekdot_dialogues": 400,
}
# The corpora of this (first) sample. scripts/corpora.py has since gained more (circa, redial_subset, the arena
# prompts: scripts/sample_constraints.py samples them); pinning the list keeps this sample regenerable byte for byte.
ROUND_ONE_CORPORA = (
    "multiwoz22",
    "multiwoz22_ru_mt",
    "sgd",
    "taskmaster4",
    "oasst_en100",
    "dolly_subset",
    "hh_rlhf_harmless_test",
    "topical_chat",
    "casino",
    "ru_anekdot_dialogues",
)
CANDIDATES = 1300
CANDIDATE_PER_CORPUS = 220
HUMAN_BOTH_SIDES = ("casino", "topical_chat", "ru_anekdot_dialogues")  # "assistant" is a person here too
TURNS_PER_DIALOGUE = 4
GROUPS = 4
BATCH = 300

# The second wave: strong signals only, since the first wave's broad list found few constraints (2.6%).
DENSE_RE = re.compile(
    r"allerg|intoleran|celiac|coeliac|gluten|lactose|diabet|asthma|pregnan|wheelchair|disabilit|medical condition|"
    r"medication|chemo|kidney|anemi|seizure|surgery|vegan|vegetarian|halal|kosher|\bsober\b|recovering|"
    r"can'?t stand|cannot stand|\bi hate\b|\bi (?:don'?t|never|do not) (?:eat|drink|fly|drive|watch|use)\b|"
    r"\bi (?:avoid|refuse)\b|\bi (?:always|only) (?:eat|drink|use|watch|fly|stay|buy|prefer)\b|not allowed to|"
    r"\bi can'?t (?:eat|have|drink|walk|swim|drive|fly|afford)\b|no more than|\bdeadline\b|"
    r"аллерг|непереносим|диабет|беремен|инвалид|вегетариан|веган|не ем\b|не пью\b|терпеть не могу|ненавижу|"
    r"никогда не (?:ем|пью|летаю|езжу|смотрю)|мне нельзя|врач запретил",
    re.IGNORECASE,
)
WAVE2 = 800
WAVE2_PER_CORPUS = 170


def random_pool(rng: random.Random) -> list[Turn]:
    out: list[Turn] = []
    for fam, quota in QUOTAS.items():
        corpora = ["multiwoz22", "multiwoz22_ru_mt"] if fam == "multiwoz" else [fam]
        pool = [(c, d) for c in corpora for d in dialogues(c) if eligible(c, d)]
        rng.shuffle(pool)
        taken: list[Turn] = []
        for corpus, dialogue_id in pool:
            turns = list(dialogues(corpus)[dialogue_id])
            rng.shuffle(turns)
            taken += sorted(turns[:TURNS_PER_DIALOGUE], key=lambda t: t.turn)
            if len(taken) >= quota:
                break
        out += taken[:quota]
    return out


def matching_pool(
    rng: random.Random, exclude: set[str], pattern: re.Pattern[str], per_corpus: int, total: int
) -> list[Turn]:
    """First-person turns by a person that ``pattern`` finds, not sampled before: at most ``per_corpus``
    from each corpus family, ``total`` in all, shuffled."""
    by_corpus: dict[str, list[Turn]] = {}
    for corpus in ROUND_ONE_CORPORA:
        for dialogue_id, turns in dialogues(corpus).items():
            if not eligible(corpus, dialogue_id):
                continue
            for t in turns:
                speaker = t.role == "user" or corpus in HUMAN_BOTH_SIDES
                if (
                    speaker
                    and t.id not in exclude
                    and len(t.text) <= SHOW_CHARS
                    and pattern.search(t.text)
                    and FIRST_PERSON_RE.search(t.text)
                ):
                    by_corpus.setdefault(family(corpus), []).append(t)
    out: list[Turn] = []
    for fam in sorted(by_corpus):
        hits = by_corpus[fam]
        rng.shuffle(hits)
        out += hits[:per_corpus]
    rng.shuffle(out)
    return out[:total]


def candidate_pool(rng: random.Random, exclude: set[str]) -> list[Turn]:
    """Wave 1: turns with a constraint word."""
    return matching_pool(rng, exclude, CANDIDATE_RE, CANDIDATE_PER_CORPUS, CANDIDATES)


def dense_pool(rng: random.Random, exclude: set[str]) -> list[Turn]:
    """Wave 2: turns with a strong constraint signal."""
    return matching_pool(rng, exclude, DENSE_RE, WAVE2_PER_CORPUS, WAVE2)


def main() -> None:
    args, rng = sample_args(__doc__, 20261204)
    items = [(t, "random") for t in random_pool(rng)]
    items += [(t, "candidate") for t in candidate_pool(rng, {t.id for t, _ in items})]
    rng.shuffle(items)
    groups = [(t, pool, k % GROUPS + 1) for k, (t, pool) in enumerate(items)]
    wave2 = dense_pool(rng, {t.id for t, _ in items})
    groups += [(t, "dense", GROUPS + 1) for t in wave2]
    ITEMS.parent.mkdir(parents=True, exist_ok=True)
    with ITEMS.open("w", encoding="utf-8") as fh:
        for t, pool, group in groups:
            fh.write(json.dumps(item_row(t, pool, group), ensure_ascii=False) + "\n")
    for g in range(1, GROUPS + 2):
        write_batches(args.out / f"group_{g}", [t for t, _, group in groups if group == g], BATCH)
    items = [(t, pool) for t, pool, _ in groups]
    counts: dict[str, int] = {}
    for t, pool in items:
        key = f"{split_of(t.corpus, t.dialogue_id)}/{pool}"
        counts[key] = counts.get(key, 0) + 1
    print(f"{len(items)} items -> {ITEMS.relative_to(ROOT)}; batches under {args.out}")
    print(json.dumps(dict(sorted(counts.items())), indent=1))


if __name__ == "__main__":
    main()
