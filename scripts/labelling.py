"""What the labelling scripts share (scripts/sample_labelling.py, scripts/sample_constraints.py,
scripts/merge_labels.py): which dialogues may be drawn, the word lists that find candidates, the item rows the
repository keeps and the annotators' batch files (text, kept outside the repository).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from scripts.corpora import Turn, previous, split_of, unit

SHOW_CHARS = 3000
# The first sample's broad constraint word list (English and Russian); the second sample reuses it.
CANDIDATE_RE = re.compile(
    r"allerg|intoleran|celiac|coeliac|gluten|lactose|diabet|asthma|pregnan|wheelchair|disab|medical|medicat|"
    r"chemo|surgery|injur|vegan|vegetarian|halal|kosher|sober|alcohol|\bnuts?\b|peanut|shellfish|"
    r"can'?t stand|cannot stand|can'?t eat|cannot eat|can'?t have|can'?t do|can'?t (?:walk|swim|drive|fly)|"
    r"\bi (?:never|always|only|avoid|refuse|hate|dislike|prefer|won'?t|don'?t (?:eat|drink|like|want|do|use))\b|"
    r"\bnever\b|\bavoid|\brefus|\bprefer|\bdislike|\bhate\b|\bmust\b|\bhave to\b|\bstrict|budget|"
    r"no more than|at most|deadline|no later than|\bmy (?:kids?|son|daughter|wife|husband|back|knee|doctor)\b|"
    r"аллерг|непереносим|диабет|беремен|инвалид|вегетариан|веган|халял|кошер|нельзя|никогда|терпеть не могу|"
    r"не ем|не пью|не люблю|ненавижу|избега|предпочита|всегда|только|бюджет|не более|не больше|строго|"
    r"крайний срок|не позднее|не позже|должн|обязательно|врач|здоровь|болит|спин[аеуы]|колен",
    re.IGNORECASE,
)
FIRST_PERSON_RE = re.compile(
    r"\b(?:i|i'm|i've|i'd|my|me|we|we're|our|us)\b|\b(?:я|мне|меня|мой|моя|мои|мы|нам|нас|наш\w*)\b", re.IGNORECASE
)


def multiwoz_language(dialogue_id: str) -> str:
    """A MultiWOZ dialogue is drawn in English or in its Russian translation, never both."""
    return "multiwoz22_ru_mt" if unit(f"lang|{dialogue_id}") < 0.5 else "multiwoz22"


def eligible(corpus: str, dialogue_id: str) -> bool:
    return not corpus.startswith("multiwoz22") or multiwoz_language(dialogue_id) == corpus


def item_row(t: Turn, pool: str, group: int) -> dict:
    return {"id": t.id, "corpus": t.corpus, "role": t.role, "lang": t.lang,
            "split": split_of(t.corpus, t.dialogue_id), "pool": pool, "group": group}


def show(text: str) -> str:
    return text if len(text) <= SHOW_CHARS else text[:SHOW_CHARS] + " [... truncated]"


def write_batches(folder: Path, turns: list[Turn], size: int, name: str = "batch_{}.jsonl") -> None:
    """The annotators' files: ``size`` items each (id, role, lang, text and the previous message as context)."""
    folder.mkdir(parents=True, exist_ok=True)
    for b in range(0, len(turns), size):
        with (folder / name.format(b // size + 1)).open("w", encoding="utf-8") as fh:
            for t in turns[b:b + size]:
                prev = previous(t)
                row = {"id": t.id, "role": t.role, "lang": t.lang, "text": show(t.text),
                       "prev": {"role": prev.role, "text": show(prev.text)} if prev else None}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
