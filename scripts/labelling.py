"""What the labelling scripts share (scripts/sample_labelling.py, scripts/sample_constraints.py,
scripts/sample_relabel.py, scripts/merge_labels.py): which dialogues may be drawn, the word lists that find
candidates, the item rows the repository keeps and the annotators' batch files (text, kept outside the repository);
and the gold labels they produced, as training and the benchmark read them (``gold_turns``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from scripts.common import ROOT, load_jsonl
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
    return {
        "id": t.id,
        "corpus": t.corpus,
        "role": t.role,
        "lang": t.lang,
        "split": split_of(t.corpus, t.dialogue_id),
        "pool": pool,
        "group": group,
    }


def show(text: str) -> str:
    return text if len(text) <= SHOW_CHARS else text[:SHOW_CHARS] + " [... truncated]"


def write_batches(folder: Path, turns: list[Turn], size: int, name: str = "batch_{}.jsonl") -> None:
    """The annotators' files: ``size`` items each (id, role, lang, text and the previous message as context)."""
    folder.mkdir(parents=True, exist_ok=True)
    for b in range(0, len(turns), size):
        with (folder / name.format(b // size + 1)).open("w", encoding="utf-8") as fh:
            for t in turns[b : b + size]:
                prev = previous(t)
                row = {
                    "id": t.id,
                    "role": t.role,
                    "lang": t.lang,
                    "text": show(t.text),
                    "prev": {"role": prev.role, "text": show(prev.text)} if prev else None,
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------------------------
# The gold real turns under version 2 of the guidelines, as training and the benchmark read them

REAL, REAL2 = ROOT / "data" / "real", ROOT / "data" / "real2"
PROMPT_CORPORA = ("arena_hard_prompts", "arena_hard_prompts_ru", "oasst_en100", "dolly_subset", "hh_rlhf_harmless_test")
ASSISTANT_CORPORA = PROMPT_CORPORA + ("multiwoz22", "multiwoz22_ru_mt", "sgd", "taskmaster4")
# The false-CRITICAL targets are rates on ordinary turns: the random pools and the second sample's prompts (drawn at
# random). Its assistant and social pools were drawn by words to look like preferences: hard negatives, reported apart.
ORDINARY_POOLS = ("random", "prompt")
HARD_POOLS = ("assistant", "social")


@dataclass(frozen=True, slots=True)
class GoldTurn:
    """One labelled real turn as the repository keeps it: ids, metadata and the gold label, no text."""

    id: str
    corpus: str
    role: str
    lang: str
    pool: str
    split: str
    label: str
    sample: str  # "real" (the first sample) or "real2"

    @property
    def audience(self) -> str:
        """Whose turn it is, for the false-CRITICAL targets: a ``prompt`` (a user's message to an assistant), an
        ``assistant`` turn (a model or a service agent), a ``task`` user turn (bookings, orders) or ``social`` chat
        between people (CaSiNo, Topical-Chat, the anekdot lines, ReDial and Circa, both sides)."""
        if self.role == "assistant":
            return "assistant" if self.corpus in ASSISTANT_CORPORA else "social"
        if self.corpus in PROMPT_CORPORA:
            return "prompt"
        return "task" if self.corpus in ASSISTANT_CORPORA else "social"


def gold_turns() -> list[GoldTurn]:
    """Every real turn with a gold label under version 2: the second sample (data/real2) and the first (data/real),
    where the relabelled turns (labels_v2.jsonl) take their version 2 label and those still pending are left out."""
    v2 = {r["id"]: r["label"] for r in load_jsonl(REAL / "labels_v2.jsonl")}
    out = []
    for sample, folder in (("real", REAL), ("real2", REAL2)):
        items = {r["id"]: r for r in load_jsonl(folder / "items.jsonl")}
        for r in load_jsonl(folder / "labels.jsonl"):
            label = v2[r["id"]] if sample == "real" and r["id"] in v2 else r["label"]
            if label is None:
                continue
            it = items[r["id"]]
            out.append(GoldTurn(r["id"], it["corpus"], it["role"], it["lang"], it["pool"], it["split"], label, sample))
    return out


def sample_args(doc: str | None, seed: int) -> tuple[argparse.Namespace, random.Random]:
    """A sampling script's arguments (``--out``, ``--seed``) and its seeded generator; ``--out`` must lie
    outside the repository, since batch files hold third-party text."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="folder outside the repository for the batch files")
    ap.add_argument("--seed", type=int, default=seed)
    args = ap.parse_args()
    if ROOT in args.out.resolve().parents or args.out.resolve() == ROOT:
        raise SystemExit("--out must lie outside the repository: batch files hold third-party text")
    return args, random.Random(args.seed)
