"""The first sample (``data/real``, labelled under version 1 of docs/labelling.md) against version 2.

    python -m scripts.sample_relabel read [--n 50] [--seed 30]   # turns rb_NN did not cover, to read by hand
    python -m scripts.sample_relabel batch --out DIR              # DIR/rb_05.jsonl: answers to a taste question

Version 2 made a standing like or dislike of a kind of thing CRITICAL ("I love football"; "Not really" after "Do you
like jazz?"). The relabelling batches rb_01 to rb_04 hold every version 1 CRITICAL turn and every other turn that a
first-person taste pattern finds; the rest keeps its version 1 label. ``read`` prints a seeded random draw of that
rest (text on the terminal only) for a reader to check that its labels still hold. ``batch`` writes the turns that
such a check showed to be at risk: turns by a person in social chat whose previous turn asks the speaker about their
tastes ("Do you watch the NFL?" - "Hi, no I don't watch it"), which carry a taste without its words. Until they are
relabelled they are listed in data/real/labels_v2.jsonl with ``label`` null, so training and evaluation leave them
out (``merge_labels --sample relabel``).
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

from scripts.common import ROOT, load_jsonl
from scripts.corpora import Turn, previous, turn
from scripts.labelling import write_batches

REAL = ROOT / "data" / "real"
BATCH = "rb_05.jsonl"
SOCIAL = ("topical_chat", "casino", "ru_anekdot_dialogues")  # both sides are people; the rest: user turns only
TASTE_QUESTION_RE = re.compile(
    r"\b(?:do|did) (?:you|u) (?:ever )?(?:like|enjoy|love|watch|follow|listen|play|read|have a favou?rite)\b|"
    r"\bare (?:you|u) (?:a (?:big )?fan|into)\b|\bfavou?rite\b|\b(?:how|what) about you\b|"
    r"\b(?:ты|вы) (?:любишь|любите|смотришь|смотрите|читаешь|читаете|слушаешь|слушаете)\b",
    re.IGNORECASE,
)
SOCIAL_RE = re.compile(r"casino|topical_chat|anekdot|oasst|hh_rlhf")


def not_relabelled() -> list[dict]:
    """The first sample's gold rows that no relabelling batch holds."""
    done = {r["id"] for r in load_jsonl(REAL / "labels_v2.jsonl")} if (REAL / "labels_v2.jsonl").is_file() else set()
    return [r for r in load_jsonl(REAL / "labels.jsonl") if r["id"] not in done]


def answers_a_taste_question(t: Turn) -> bool:
    """A turn by a person in social chat or a prompt, after a question about the speaker's tastes."""
    if not SOCIAL_RE.search(t.corpus) or (t.role != "user" and t.corpus not in SOCIAL):
        return False
    before = previous(t)
    return before is not None and bool(TASTE_QUESTION_RE.search(before.text))


def cmd_read(args: argparse.Namespace) -> None:
    rows = not_relabelled()
    print(f"{len(rows)} turns keep their version 1 label; {args.n} drawn with seed {args.seed}")
    for k, r in enumerate(random.Random(args.seed).sample(rows, args.n), start=1):
        t, before = turn(r["id"]), previous(turn(r["id"]))
        print(f"--- {k} [{r['label']}] {r['id']} ({t.role})")
        if before:
            print("    prev:", " ".join(before.text.split())[:300])
        print("    text:", " ".join(t.text.split())[:600])


def cmd_batch(args: argparse.Namespace) -> None:
    if ROOT in args.out.resolve().parents or args.out.resolve() == ROOT:
        raise SystemExit("--out must lie outside the repository: batch files hold third-party text")
    turns = [turn(r["id"]) for r in not_relabelled() if r["label"] != "CRITICAL"]
    chosen = [t for t in turns if answers_a_taste_question(t)]
    random.Random(BATCH).shuffle(chosen)
    write_batches(args.out, chosen, size=max(1, len(chosen)), name=BATCH)
    print(f"{len(chosen)} turns -> {args.out / BATCH}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    read = sub.add_parser("read")
    read.add_argument("--n", type=int, default=50)
    read.add_argument("--seed", type=int, default=30)
    read.set_defaults(fn=cmd_read)
    batch = sub.add_parser("batch")
    batch.add_argument("--out", type=Path, required=True)
    batch.set_defaults(fn=cmd_batch)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
