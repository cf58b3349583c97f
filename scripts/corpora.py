"""Reading the third-party dialogue corpora in ``../shared/corpora`` (see its README.md and LICENSES.md).

The corpora are real, human-written (or, for one file, machine-translated) dialogues that none of us
wrote. They are never copied into this repository: scripts read them from where they lie
(``$AFM_CORPORA`` or ``<repo>/../shared/corpora``), and what the repository keeps about them is ids
(``<corpus>|<dialogue_id>|<turn>``) and our own labels and judgements. Credits: docs/data_card.md.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from scripts.common import ROOT

FILES = {
    "multiwoz22": "multiwoz22.jsonl",
    "multiwoz22_ru_mt": "multiwoz22_ru_mt.jsonl.gz",
    "sgd": "sgd.jsonl",
    "taskmaster4": "taskmaster4.jsonl",
    "oasst_en100": "oasst_en100.jsonl",
    "dolly_subset": "dolly_subset.jsonl",
    "hh_rlhf_harmless_test": "hh_rlhf_harmless_test.jsonl",
    "topical_chat": "topical_chat.jsonl.gz",
    "casino": "casino.jsonl",
    "ru_anekdot_dialogues": "ru_anekdot_dialogues.jsonl",
    "circa": "circa.jsonl",
    "redial_subset": "redial_subset.jsonl",
    "arena_hard_prompts": "arena_hard_prompts.jsonl",
    "arena_hard_prompts_ru": "arena_hard_prompts_ru.jsonl",
}


@dataclass(frozen=True, slots=True)
class Turn:
    corpus: str
    dialogue_id: str
    turn: int
    role: str
    text: str
    lang: str

    @property
    def id(self) -> str:
        return f"{self.corpus}|{self.dialogue_id}|{self.turn}"


# The dialogue split every script agrees on (labelling, training, the long-conversation benchmark).
SPLITS = (("test", 0.35), ("dev", 0.20), ("train", 0.45))


def family(corpus: str) -> str:
    """Both MultiWOZ files (English and its Russian translation) are one family of dialogues."""
    return "multiwoz" if corpus.startswith("multiwoz22") else corpus


def unit(key: str) -> float:
    """A number in [0, 1) fixed by ``key``: a seeded draw that needs no state."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) / 16**12


def split_of(corpus: str, dialogue_id: str) -> str:
    """The split of a dialogue: a hash of its family and id, so both MultiWOZ files agree."""
    u, edge = unit(f"split|{family(corpus)}|{dialogue_id}"), 0.0
    for name, share in SPLITS:
        edge += share
        if u < edge:
            return name
    return SPLITS[-1][0]


def corpora_dir() -> Path:
    """Where the corpora lie; a clear error names the variable when they are not there."""
    path = Path(os.environ.get("AFM_CORPORA") or ROOT.parent / "shared" / "corpora")
    if not (path / "README.md").is_file():
        raise SystemExit(f"third-party corpora not found at {path}; set AFM_CORPORA to the folder that holds them")
    return path


def _lines(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        yield from fh


@cache
def dialogues(corpus: str) -> dict[str, list[Turn]]:
    """Every dialogue of one corpus, in file order, its turns in order."""
    out: dict[str, list[Turn]] = {}
    for line in _lines(corpora_dir() / FILES[corpus]):
        if line.strip():
            r = json.loads(line)
            out.setdefault(r["dialogue_id"], []).append(
                Turn(r["corpus"], r["dialogue_id"], int(r["turn"]), r["role"], r["text"], r["lang"])
            )
    return out


def turn(turn_id: str) -> Turn:
    """One turn by its id ``<corpus>|<dialogue_id>|<turn>``."""
    corpus, dialogue_id, index = turn_id.split("|")
    return dialogues(corpus)[dialogue_id][int(index)]


def previous(t: Turn) -> Turn | None:
    return dialogues(t.corpus)[t.dialogue_id][t.turn - 1] if t.turn > 0 else None
