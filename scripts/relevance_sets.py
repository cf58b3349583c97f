"""The relevance sets: long conversations of real dialogue with questions annotators wrote, and preference items.

    .venv/bin/python -m scripts.relevance_sets build               # data/long_real/conversations.jsonl (ids only)
    .venv/bin/python -m scripts.relevance_sets dump OUTDIR          # annotators' reading copies (text: never committed)
    .venv/bin/python -m scripts.relevance_sets check FILE.jsonl     # validate an annotator's questions
    .venv/bin/python -m scripts.relevance_sets collect DIR          # annotators' files -> data/long_real/
    .venv/bin/python -m scripts.relevance_sets candidates OUTDIR    # candidate statements (text: never committed)
    .venv/bin/python -m scripts.relevance_sets check-prefs FILE.jsonl --split dev|test

**Conversations.** A conversation is a run of whole real dialogues ("sessions") read from ../shared/corpora:
open-domain chit-chat between two people (Topical-Chat), campsite negotiations (CaSiNo), movie-recommendation
chats (ReDial), bookings (MultiWOZ, SGD, Taskmaster-4), assistant chats (OpenAssistant, Dolly, HH-RLHF) and
short interviews about tastes (Circa, several question/answer pairs to a session), about ``TURNS`` messages in
all, like the multi-session chats of a long-lived assistant. Every dialogue comes from one split of the
dialogue split, so dev and test conversations share none. The repository keeps the conversations as dialogue
ids and the questions with their evidence as turn ids (``<corpus>|<dialogue_id>|<turn>``).

**Preference items.** A real first-person statement (Circa answers, ReDial seekers, CaSiNo and Topical-Chat
speakers) of the split that annotators chose because it states a standing like, dislike, need or refusal on
its own, then ``EXCHANGES`` long unrelated real exchanges (OpenAssistant and Dolly requests with their
answers), then the request the annotators wrote where the preference matters. The repository keeps the
statement's turn id and the request.

Questions and requests are written by annotators who read the text (docs/long_questions.md), never by whoever
tunes the engine; ``check`` and ``check-prefs`` enforce what a script can: the evidence exists, and the
question does not reuse the evidence's distinctive words (rare in the conversation, a name or a number).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from scripts.common import ROOT, content_stems, distinctive
from scripts.corpora import Turn, dialogues, split_of, turn

DATA = ROOT / "data" / "long_real"
CONVERSATIONS = DATA / "conversations.jsonl"
TURNS = 600
PLAN = {"dev": 8, "test": 6}  # conversations per split
SEED = "20261204:long_real"
# Sessions drawn per corpus (weights of a draw, not of messages); circa sessions hold CIRCA_PAIRS pairs.
MIX = {
    "topical_chat": 0.26,
    "casino": 0.13,
    "redial_subset": 0.15,
    "multiwoz22": 0.12,
    "sgd": 0.08,
    "taskmaster4": 0.04,
    "oasst_en100": 0.06,
    "circa": 0.08,
    "hh_rlhf_harmless_test": 0.05,
    "dolly_subset": 0.03,
}
CIRCA_PAIRS = 8
TYPES = ("single", "multi", "temporal", "third_person")


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    split: str
    sessions: list[list[str]]  # each session: "<corpus>|<dialogue_id>" of its dialogues, in order

    def turns(self) -> list[Turn]:
        return [t for session in self.sessions for key in session for t in _dialogue(key)]

    def session_of(self) -> list[int]:
        return [k for k, session in enumerate(self.sessions) for key in session for _ in _dialogue(key)]


def _dialogue(key: str) -> list[Turn]:
    corpus, dialogue_id = key.split("|", 1)
    return dialogues(corpus)[dialogue_id]


@cache
def _pool(corpus: str, split: str) -> list[str]:
    return sorted(
        d
        for d, turns in dialogues(corpus).items()
        if split_of(corpus, d) == split and (len(turns) >= 2 or corpus == "circa")
    )


def build(split: str, index: int, rng: random.Random, used: set[str]) -> Conversation:
    """Whole dialogues of ``split``, drawn by ``MIX`` and never twice, until ``TURNS`` messages."""
    corpora, weights = zip(*MIX.items())
    sessions: list[list[str]] = []
    size = 0
    while size < TURNS:
        corpus = rng.choices(corpora, weights)[0]
        pool = [d for d in _pool(corpus, split) if f"{corpus}|{d}" not in used]
        picks = rng.sample(pool, CIRCA_PAIRS if corpus == "circa" else 1)
        keys = [f"{corpus}|{d}" for d in picks]
        used.update(keys)
        sessions.append(keys)
        size += sum(len(_dialogue(k)) for k in keys)
    return Conversation(f"{split}-{index:02d}", split, sessions)


def conversations() -> list[Conversation]:
    rows = [json.loads(line) for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Conversation(r["id"], r["split"], r["sessions"]) for r in rows]


def conversation(conv_id: str) -> Conversation:
    found = [c for c in conversations() if c.id == conv_id]
    if not found:
        raise SystemExit(f"no conversation {conv_id!r} in {CONVERSATIONS}")
    return found[0]


def cmd_build(_: argparse.Namespace) -> None:
    rng = random.Random(SEED)
    used: set[str] = set()
    convs = [build(split, i, rng, used) for split, n in PLAN.items() for i in range(n)]
    DATA.mkdir(parents=True, exist_ok=True)
    CONVERSATIONS.write_text(
        "".join(json.dumps({"id": c.id, "split": c.split, "sessions": c.sessions}) + "\n" for c in convs),
        encoding="utf-8",
    )
    for c in convs:
        counts = Counter(key.split("|")[0] for s in c.sessions for key in s)
        print(c.id, len(c.turns()), "messages,", len(c.sessions), "sessions", dict(counts))


def cmd_dump(args: argparse.Namespace) -> None:
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for c in conversations():
        if args.split and c.split != args.split:
            continue
        lines = [f"# conversation {c.id}: {len(c.turns())} messages in {len(c.sessions)} sessions", ""]
        n = 0
        for k, session in enumerate(c.sessions):
            corpus = session[0].split("|")[0]
            lines.append(f"---- session {k + 1} ({corpus}) ----")
            for key in session:
                for t in _dialogue(key):
                    lines.append(f"#{n:04d} [{t.role}] {' '.join(t.text.split())}")
                    n += 1
            lines.append("")
        (out / f"{c.id}.txt").write_text("\n".join(lines), encoding="utf-8")
        print(out / f"{c.id}.txt", n)


def check_questions(rows: list[dict]) -> list[str]:
    """Problems with an annotator's questions, one line each (empty: the file is valid)."""
    problems = []
    convs = {c.id: c for c in conversations()}
    cache: dict[str, tuple[list[Turn], Counter[str]]] = {}
    for k, r in enumerate(rows):
        where = f"line {k + 1}"
        c = convs.get(r.get("conversation", ""))
        if c is None:
            problems.append(f"{where}: unknown conversation {r.get('conversation')!r}")
            continue
        if c.id not in cache:
            turns = c.turns()
            cache[c.id] = (turns, Counter(s for t in turns for s in content_stems(t.text)))
        turns, df = cache[c.id]
        question, evidence, kind = r.get("question"), r.get("evidence"), r.get("type")
        if not isinstance(question, str) or len(question.split()) < 3:
            problems.append(f"{where}: the question must be a sentence")
            continue
        if kind not in TYPES:
            problems.append(f"{where}: type must be one of {', '.join(TYPES)}")
        if (
            not isinstance(evidence, list)
            or not evidence
            or not all(isinstance(i, int) and 0 <= i < len(turns) for i in evidence)
        ):
            problems.append(f"{where}: evidence must be a non-empty list of message numbers of {c.id}")
            continue
        if kind == "multi" and len(set(evidence)) < 2:
            problems.append(f"{where}: a multi question needs two evidence messages or more")
        if not isinstance(r.get("answer"), str) or not r["answer"].strip():
            problems.append(f"{where}: give the short answer")
        reused = content_stems(question) & set().union(*(distinctive(turns[i].text, df, len(turns)) for i in evidence))
        if reused:
            problems.append(f"{where}: it reuses distinctive words of its evidence: {', '.join(sorted(reused))}")
    return problems


def cmd_check_questions(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.file).read_text(encoding="utf-8").splitlines() if line.strip()]
    problems = check_questions(rows)
    for p in problems:
        print(p)
    kinds = Counter(r.get("type") for r in rows)
    print(f"{len(rows)} questions, {len(problems)} problems; types: {dict(kinds)}")
    sys.exit(1 if problems else 0)


def to_ids(rows: list[dict]) -> list[dict]:
    """Annotators' message numbers as turn ids, the form the repository keeps."""
    convs = {c.id: c for c in conversations()}
    out = []
    for r in rows:
        turns = convs[r["conversation"]].turns()
        out.append({**r, "evidence": [turns[i].id for i in r["evidence"]]})
    return out


def questions(split: str) -> list[dict]:
    """The questions of ``split`` as the repository keeps them (evidence as turn ids)."""
    path = DATA / f"questions_{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cmd_collect(args: argparse.Namespace) -> None:
    """Validate every annotator file and write the questions with turn ids, one file per split."""
    convs = {c.id: c for c in conversations()}
    by_split: dict[str, list[dict]] = {}
    for path in sorted(Path(args.dir).glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        problems = check_questions(rows)
        if problems:
            raise SystemExit(f"{path}: {len(problems)} problems; run `check` on it")
        for r in to_ids(rows):
            by_split.setdefault(convs[r["conversation"]].split, []).append(
                {k: r[k] for k in ("conversation", "question", "evidence", "type", "answer")}
            )
    for split, rows in by_split.items():
        (DATA / f"questions_{split}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        print(split, len(rows), dict(Counter(r["type"] for r in rows)))


SOURCES = ("circa", "redial_subset", "casino", "topical_chat")
EXCHANGES = 10
MAX_CHARS = 300
STATEMENT_RE = re.compile(
    r"\bi (?:really |just |absolutely )?(?:love|like|enjoy|prefer|hate|dislike|can'?t stand|avoid|never|always|only"
    r"|don'?t (?:like|eat|drink|watch|read|enjoy|do|care for))\b|\bi'?m (?:allergic|vegan|vegetarian|lactose"
    r"|not (?:a fan|into|big on))|\bmy favou?rite\b|\bnot a fan\b|\bi'?d rather\b",
    re.IGNORECASE,
)
CANDIDATES_PER_SOURCE = 150


@dataclass(frozen=True, slots=True)
class Item:
    statement: Turn
    exchanges: list[list[Turn]]
    question: str

    def messages(self) -> list[dict[str, str]]:
        out = [{"role": "user", "content": self.statement.text}]
        for pair in self.exchanges:
            out += [{"role": t.role, "content": t.text} for t in pair]
        return out


def candidates(split: str, rng: random.Random) -> list[Turn]:
    """First-person statements by a person that may state a preference, ``CANDIDATES_PER_SOURCE`` per corpus."""
    out = []
    for corpus in SOURCES:
        found = [
            t
            for d, turns in dialogues(corpus).items()
            if split_of(corpus, d) == split
            for t in turns
            if (t.role == "user" or corpus in ("casino", "topical_chat"))
            and len(t.text) <= MAX_CHARS
            and STATEMENT_RE.search(t.text)
        ]
        out += rng.sample(found, min(CANDIDATES_PER_SOURCE, len(found)))
    rng.shuffle(out)
    return out


def long_exchanges(split: str) -> list[list[Turn]]:
    """A real request and its long answer (over 600 characters), from the split's assistant chats."""
    out = []
    for corpus in ("oasst_en100", "dolly_subset"):
        for d, turns in dialogues(corpus).items():
            pair = turns[:2]
            roles = [t.role for t in pair]
            if split_of(corpus, d) == split and roles == ["user", "assistant"] and len(pair[1].text) > 600:
                out.append(pair)
    return out


def preference_items(split: str) -> list[Item]:
    """The items of ``split``: statements and requests from data/long_real, exchanges drawn by a seeded rng."""
    rows = [
        json.loads(line)
        for line in (DATA / f"prefs_{split}.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    pool = long_exchanges(split)
    rng = random.Random(f"prefs:{split}")
    return [Item(turn(r["statement"]), rng.sample(pool, EXCHANGES), r["question"]) for r in rows]


def cmd_candidates(args: argparse.Namespace) -> None:
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for split in ("dev", "test"):
        rows = candidates(split, random.Random(f"prefs-candidates:{split}"))
        (out / f"candidates_{split}.txt").write_text(
            "\n".join(f"{t.id}\t{' '.join(t.text.split())}" for t in rows) + "\n", encoding="utf-8"
        )
        print(split, len(rows), dict(Counter(t.corpus for t in rows)))


def check_prefs(rows: list[dict], split: str) -> list[str]:
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


def cmd_check_prefs(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.file).read_text(encoding="utf-8").splitlines() if line.strip()]
    problems = check_prefs(rows, args.split)
    for p in problems:
        print(p)
    print(
        f"{len(rows)} items, {len(problems)} problems; corpora: "
        f"{dict(Counter(r.get('statement', '|').split('|')[0] for r in rows))}"
    )
    sys.exit(1 if problems else 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build").set_defaults(fn=cmd_build)
    dump = sub.add_parser("dump")
    dump.add_argument("outdir")
    dump.add_argument("--split", choices=["dev", "test"])
    dump.set_defaults(fn=cmd_dump)
    chk = sub.add_parser("check")
    chk.add_argument("file")
    chk.set_defaults(fn=cmd_check_questions)
    col = sub.add_parser("collect")
    col.add_argument("dir")
    col.set_defaults(fn=cmd_collect)
    cand = sub.add_parser("candidates")
    cand.add_argument("outdir")
    cand.set_defaults(fn=cmd_candidates)
    prefs = sub.add_parser("check-prefs")
    prefs.add_argument("file")
    prefs.add_argument("--split", choices=["dev", "test"], required=True)
    prefs.set_defaults(fn=cmd_check_prefs)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
