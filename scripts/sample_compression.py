"""Sample real third-party messages for the compression benchmark, by dialogue, with a fixed seed.

    python -m scripts.sample_compression [--seed 20261205]

Our own messages (``data/compression/messages.jsonl``) were written to exercise the compressor; these
are messages that nobody wrote for it: one turn per dialogue, long enough to compress (25 to 320
o200k tokens), half user and half assistant turns where a corpus has them, English and Russian (the Russian MultiWOZ
machine translation and the anekdot dialogues). A MultiWOZ dialogue is drawn in one language only.

Each corpus's draws are split into a dev part (30 %, by a hash of the dialogue) that may be read and
tuned on, and a test part that is only ever measured in aggregate and judged by people who did not
write the compressor. Writes ``data/compression/real_messages.jsonl``: ids, corpus, role, language,
split and token count, never the text (the corpora stay in ``../shared/corpora``, see
``scripts/corpora.py``).
"""

from __future__ import annotations

import argparse
import json
import random

from afm_local.local.tokens import TiktokenCounter
from scripts.common import ROOT
from scripts.corpora import Turn, dialogues, family, unit

REAL = ROOT / "data" / "compression" / "real_messages.jsonl"
QUOTAS = {  # messages per corpus: 150 English, 50 Russian
    "multiwoz22": 25,
    "sgd": 15,
    "taskmaster4": 10,
    "oasst_en100": 20,
    "dolly_subset": 15,
    "hh_rlhf_harmless_test": 20,
    "topical_chat": 25,
    "casino": 20,
    "multiwoz22_ru_mt": 30,
    "ru_anekdot_dialogues": 20,
}
MIN_TOKENS, MAX_TOKENS = 25, 320
DEV_SHARE = 0.3


def draw(corpus: str, quota: int, seed: int, counter: TiktokenCounter, taken: set[str]) -> list[Turn]:
    """``quota`` turns of ``corpus``, one per dialogue, half of them user turns and half assistant
    turns where the corpus has enough of each (then the other role fills up). ``taken`` holds the
    family-level dialogue ids already used, so parallel MultiWOZ dialogues are drawn once."""
    rng = random.Random(f"{seed}|{corpus}")
    ids = sorted(dialogues(corpus))
    rng.shuffle(ids)
    need = {"user": quota // 2, "assistant": quota - quota // 2}
    out: list[Turn] = []
    spare: list[Turn] = []
    for dialogue_id in ids:
        if len(out) == quota:
            break
        key = f"{family(corpus)}|{dialogue_id}"
        if key in taken:
            continue
        long = [t for t in dialogues(corpus)[dialogue_id] if MIN_TOKENS <= counter.count(t.text) <= MAX_TOKENS]
        roles = [r for r in ("user", "assistant") if need[r] and any(t.role == r for t in long)]
        if not roles:
            spare += long[:1]
            continue
        role = roles[0] if len(roles) == 1 else rng.choice(roles)
        out.append(rng.choice([t for t in long if t.role == role]))
        need[role] -= 1
        taken.add(key)
    for t in spare[: quota - len(out)]:
        out.append(t)
        taken.add(f"{family(corpus)}|{t.dialogue_id}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=20261205)
    args = ap.parse_args(argv)
    counter = TiktokenCounter()
    taken: set[str] = set()
    rows = []
    for corpus, quota in QUOTAS.items():
        turns = draw(corpus, quota, args.seed, counter, taken)
        order = sorted(turns, key=lambda t: unit(f"{args.seed}|split|{family(corpus)}|{t.dialogue_id}"))
        dev = {t.id for t in order[: round(DEV_SHARE * len(turns))]}
        rows += [
            {
                "id": t.id,
                "corpus": t.corpus,
                "role": t.role,
                "lang": t.lang,
                "split": "dev" if t.id in dev else "test",
                "tokens": counter.count(t.text),
            }
            for t in turns
        ]
    REAL.parent.mkdir(parents=True, exist_ok=True)
    REAL.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    counts: dict[str, int] = {}
    for r in rows:
        key = f"{r['split']}/{r['lang']}/{r['role']}"
        counts[key] = counts.get(key, 0) + 1
    print(f"{len(rows)} messages -> {REAL.relative_to(ROOT)}")
    print(json.dumps(dict(sorted(counts.items())), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
