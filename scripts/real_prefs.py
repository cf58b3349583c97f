"""Preference-following items from real statements: a stated preference, long unrelated real exchanges, a question.

    .venv/bin/python -m scripts.real_prefs candidates OUTDIR   # annotators' candidate lists (text: never committed)
    .venv/bin/python -m scripts.real_prefs check FILE.jsonl    # validate an annotator's items

The statements are real first-person turns (Circa answers, ReDial seekers, CaSiNo and Topical-Chat
speakers) from the dev or test split of the dialogue split; annotators choose the ones that state a
standing like, dislike, need or refusal on their own, and write the later request where it matters
(docs/long_questions.md, "Preference items"). An item is the statement as a user message, ``EXCHANGES``
long unrelated real exchanges (OpenAssistant and Dolly requests with their answers), then the request
(``scripts.corpora.preference_items``, which the benchmarks read). The repository keeps the statement's turn id
and our request.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

from scripts.common import content_stems, distinctive
from scripts.corpora import Turn, dialogues, split_of, turn

SOURCES = ("circa", "redial_subset", "casino", "topical_chat")
MAX_CHARS = 300
STATEMENT_RE = re.compile(
    r"\bi (?:really |just |absolutely )?(?:love|like|enjoy|prefer|hate|dislike|can'?t stand|avoid|never|always|only"
    r"|don'?t (?:like|eat|drink|watch|read|enjoy|do|care for))\b|\bi'?m (?:allergic|vegan|vegetarian|lactose"
    r"|not (?:a fan|into|big on))|\bmy favou?rite\b|\bnot a fan\b|\bi'?d rather\b",
    re.IGNORECASE,
)
CANDIDATES_PER_SOURCE = 150


def candidates(split: str, rng: random.Random) -> list[Turn]:
    """First-person statements by a person that may state a preference, ``CANDIDATES_PER_SOURCE`` per corpus."""
    out = []
    for corpus in SOURCES:
        found = [t for d, turns in dialogues(corpus).items() if split_of(corpus, d) == split for t in turns
                 if (t.role == "user" or corpus in ("casino", "topical_chat")) and len(t.text) <= MAX_CHARS
                 and STATEMENT_RE.search(t.text)]
        out += rng.sample(found, min(CANDIDATES_PER_SOURCE, len(found)))
    rng.shuffle(out)
    return out


def cmd_candidates(args: argparse.Namespace) -> None:
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for split in ("dev", "test"):
        rows = candidates(split, random.Random(f"prefs-candidates:{split}"))
        (out / f"candidates_{split}.txt").write_text(
            "\n".join(f"{t.id}\t{' '.join(t.text.split())}" for t in rows) + "\n", encoding="utf-8")
        print(split, len(rows), dict(Counter(t.corpus for t in rows)))


def check(rows: list[dict], split: str) -> list[str]:
    problems = []
    seen: set[str] = set()
    for k, r in enumerate(rows):
        where = f"line {k + 1}"
        try:
            t = turn(r["statement"])
        except (KeyError, ValueError, IndexError):
            problems.append(f"{where}: unknown statement id {r.get('statement')!r}")
            continue
        if t.corpus not in SOURCES or split_of(t.corpus, t.dialogue_id) != split:
            problems.append(f"{where}: the statement is not a {split} candidate")
        if t.id in seen:
            problems.append(f"{where}: statement used twice")
        seen.add(t.id)
        question = r.get("question")
        if not isinstance(question, str) or len(question.split()) < 4:
            problems.append(f"{where}: the request must be a sentence")
            continue
        # distinctive = any content word of the statement: a request must not echo the preference's words
        reused = content_stems(question) & distinctive(t.text, Counter(), 1)
        if reused:
            problems.append(f"{where}: the request reuses words of the statement: {', '.join(sorted(reused))}")
    counts = Counter(turn(r["statement"]).corpus for r in rows if "statement" in r)
    top = max(counts.values(), default=0)
    if rows and top > 0.4 * len(rows):
        problems.append(f"one corpus is {top} of {len(rows)} items (at most 40%): {dict(counts)}")
    return problems


def cmd_check(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.file).read_text(encoding="utf-8").splitlines() if line.strip()]
    problems = check(rows, args.split)
    for p in problems:
        print(p)
    print(f"{len(rows)} items, {len(problems)} problems; corpora: "
          f"{dict(Counter(r.get('statement', '|').split('|')[0] for r in rows))}")
    sys.exit(1 if problems else 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    cand = sub.add_parser("candidates")
    cand.add_argument("outdir")
    cand.set_defaults(fn=cmd_candidates)
    chk = sub.add_parser("check")
    chk.add_argument("file")
    chk.add_argument("--split", choices=["dev", "test"], required=True)
    chk.set_defaults(fn=cmd_check)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
