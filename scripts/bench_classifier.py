#!/usr/bin/env python3
"""Benchmark the importance classifier as deployed: on real third-party turns, on our own data, and its speed.

    python -m scripts.bench_classifier [--runs 20] [--out docs/benchmarks/classifier.md]

Real turns come first because our own data flatters every model: an earlier one scored 0.98 macro-F1
on our own test split and 0.49 on real held-out turns. The real turns are the two labelled samples
(``scripts.labelling.gold_turns``: data/real and data/real2, two annotators and an adjudicator, version 2 of
docs/labelling.md, split by dialogue; docs/data_card.md), their text read from the third-party corpora through
``scripts.corpora`` and never written anywhere. Tables per language, role, corpus and sampling pool, with the
false-CRITICAL rate per audience (prompts to assistants, assistant turns, social chat, task turns). Classifiers:

* **deployed**: ``local_classifier()`` on the e5 encoder, exactly what the engine labels with;
* **rules**: ``RuleClassifier`` alone, the fallback when no model is installed;
* **previous**: the model deployed before it, from its labels on the real dev and test turns and on the statements
  of the preference check, kept as ids and labels in ``data/real/previous_model_predictions.jsonl``
  (``--save-as-previous`` writes them from the installed model, before a new one replaces it).

The preference check (``scripts.relevance_sets.preference_items``: real statements chosen by annotators, none trained
on) gets its own table: CRITICAL recall on the statements per corpus. Whether they reach the model ten long exchanges
later is ``python -m scripts.bench_long --suite realprefs``.

Without the corpora only the own-data and latency tables are written. Prints markdown and writes it
to docs/benchmarks/classifier.md. Everything runs on 1 thread.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from afm_local.core.protocols import ImportanceClassifier
from afm_local.core.types import Utterance
from afm_local.core.vocabulary import IMPORTANCE_NAMES
from afm_local.local.paths import models_dir
from afm_local.text.rules import RuleClassifier
from scripts.common import OUT_DIR, ROOT, load_jsonl, metrics
from scripts.labelling import HARD_POOLS, ORDINARY_POOLS, GoldTurn, gold_turns
from scripts.relevance_sets import preference_items

OWN = ROOT / "data" / "importance"
PREVIOUS = ROOT / "data" / "real" / "previous_model_predictions.jsonl"
ROLES = ("user", "assistant")
BATCH = 30  # messages per classify call in the latency table: one ingest of a pasted conversation


def corpora_missing() -> str | None:
    """Why the third-party corpora cannot be read, or ``None`` when they can."""
    from scripts.corpora import corpora_dir

    try:
        corpora_dir()
    except SystemExit as missing:  # corpora_dir's own message names the folder and the variable
        return str(missing)
    return None


def labels_of(clf: ImportanceClassifier, items: Sequence[Utterance]) -> list[str]:
    return [c.label.value for c in clf.classify(items)]


# ------------------------------------------------------------------------------------------ real turns
AUDIENCES = ("prompt", "assistant", "social", "task")


def pct(hits: int, n: int) -> str:
    return f"{100 * hits / n:.1f}% of {n}" if n else "–"


def false_critical(
    rows: Sequence[GoldTurn],
    pred: Sequence[str],
    keep: Callable[[GoldTurn], bool],
    pools: Sequence[str] = ORDINARY_POOLS,
) -> str:
    """False CRITICAL among ordinary turns (the random pools and the prompts drawn at random), gold not CRITICAL: what
    a user sees flagged, and what the targets are about. With ``HARD_POOLS``: the second sample's assistant turns and
    social chat drawn by words to look like preferences (hard negatives; their rates err high)."""
    idx = [i for i, r in enumerate(rows) if r.pool in pools and r.label != "CRITICAL" and keep(r)]
    return pct(sum(pred[i] == "CRITICAL" for i in idx), len(idx))


def recall_cell(rows: Sequence[GoldTurn], pred: Sequence[str], keep: Callable[[GoldTurn], bool]) -> str:
    idx = [i for i, r in enumerate(rows) if r.label == "CRITICAL" and keep(r)]
    hits = sum(pred[i] == "CRITICAL" for i in idx)
    return f"{hits / len(idx):.3f} ({hits}/{len(idx)})" if idx else "–"


def precision_cell(rows: Sequence[GoldTurn], pred: Sequence[str], keep: Callable[[GoldTurn], bool]) -> str:
    idx = [i for i, r in enumerate(rows) if pred[i] == "CRITICAL" and keep(r)]
    hits = sum(rows[i].label == "CRITICAL" for i in idx)
    return f"{hits / len(idx):.3f} ({hits}/{len(idx)})" if idx else "–"


def overall_table(rows: list[GoldTurn], preds: dict[str, list[str]]) -> list[str]:
    """Overall, per language and per role, with the false-CRITICAL rate per audience."""
    slices: list[tuple[str, Callable[[GoldTurn], bool]]] = [
        ("all", lambda r: True),
        ("en", lambda r: r.lang == "en"),
        ("ru", lambda r: r.lang == "ru"),
        ("user", lambda r: r.role == "user"),
        ("assistant", lambda r: r.role == "assistant"),
    ]
    md = [
        "| classifier | slice | turns | CRITICAL | macro-F1 | CRIT recall | CRIT precision | "
        + " | ".join(f"false CRIT, {a}" for a in AUDIENCES)
        + " | false CRIT, hard negatives |",
        "|---|---|---|---|---|---|---|" + "---|" * 5,
    ]
    for name, pred in preds.items():
        for slice_name, keep in slices:
            idx = [i for i, r in enumerate(rows) if keep(r)]
            m = metrics([rows[i].label for i in idx], [pred[i] for i in idx])
            crit = m["per_class"]["CRITICAL"]
            md.append(
                f"| {name} | {slice_name} | {m['n']} | {crit['support']} | {m['macro_f1']:.3f} | {crit['recall']:.3f}"
                f" | {crit['precision']:.3f} | "
                + " | ".join(false_critical(rows, pred, lambda r, a=a: keep(r) and r.audience == a) for a in AUDIENCES)
                + f" | {false_critical(rows, pred, keep, HARD_POOLS)} |"
            )
    deployed = metrics([r.label for r in rows], preds["deployed"])["confusion"]
    md += [
        "",
        "Confusion of the deployed classifier (rows = gold, columns = predicted):",
        "",
        "| gold \\ predicted | " + " | ".join(IMPORTANCE_NAMES) + " |",
        "|---|---|---|---|",
    ]
    return md + [
        f"| {gold} | " + " | ".join(str(deployed[gold][p]) for p in IMPORTANCE_NAMES) + " |"
        for gold in IMPORTANCE_NAMES
    ]


def corpus_table(rows: list[GoldTurn], preds: dict[str, list[str]]) -> list[str]:
    """Per corpus: CRITICAL recall and precision, and false CRITICAL per audience, for every classifier."""
    md = [
        "| corpus | lang | classifier | CRIT recall | CRIT precision | "
        + " | ".join(f"false CRIT, {a}" for a in AUDIENCES)
        + " |",
        "|---|---|---|---|---|" + "---|" * 4,
    ]
    for corpus in sorted({r.corpus for r in rows}):
        lang = next(r.lang for r in rows if r.corpus == corpus)
        for name, pred in preds.items():
            cells = [
                recall_cell(rows, pred, lambda r: r.corpus == corpus),
                precision_cell(rows, pred, lambda r: r.corpus == corpus),
            ]
            cells += [
                false_critical(rows, pred, lambda r, a=a: r.corpus == corpus and r.audience == a) for a in AUDIENCES
            ]
            md.append(f"| {corpus} | {lang} | {name} | " + " | ".join(cells) + " |")
    return md


def pool_table(rows: list[GoldTurn], preds: dict[str, list[str]]) -> list[str]:
    """CRITICAL recall by speaker and by sample and pool (the pattern-drawn pools favour statements with its words)."""
    pools = sorted({(r.sample, r.pool) for r in rows if r.label == "CRITICAL"})
    md = [
        "| classifier | user | assistant | " + " | ".join(f"{s} {p}" for s, p in pools) + " |",
        "|---|---|---|" + "---|" * len(pools),
    ]
    for name, pred in preds.items():
        cells = [recall_cell(rows, pred, lambda r, role=role: r.role == role) for role in ROLES]
        cells += [recall_cell(rows, pred, lambda r, s=s, p=p: (r.sample, r.pool) == (s, p)) for s, p in pools]
        md.append(f"| {name} | " + " | ".join(cells) + " |")
    return md


def real_tables(title: str, note: str, rows: list[GoldTurn], preds: dict[str, list[str]]) -> list[str]:
    n_crit = sum(r.label == "CRITICAL" for r in rows)
    return [
        f"## {title}: {len(rows):,} turns, {n_crit} CRITICAL",
        "",
        note,
        "",
        *overall_table(rows, preds),
        "",
        "Per corpus (`assistant` is a person in CaSiNo, Topical-Chat, ReDial and Circa, a model in HH-RLHF, OASST"
        " and Dolly, alternating lines of a joke in the anekdot corpus; a `prompt` is a user's message to an"
        " assistant in Arena-Hard, OASST, Dolly and HH-RLHF; `task` a user turn of a booking or an order):",
        "",
        *corpus_table(rows, preds),
        "",
        "CRITICAL recall by speaker and by sample and sampling pool:",
        "",
        *pool_table(rows, preds),
        "",
    ]


def real_predictions(clf: ImportanceClassifier, rows: list[GoldTurn]) -> dict[str, list[str]]:
    """Labels of the deployed classifier, the rules and (from its kept labels) the previous model."""
    from scripts.corpora import turn

    items = [Utterance(turn(r.id).text, r.role) for r in rows]
    preds = {"deployed": labels_of(clf, items), "rules": labels_of(RuleClassifier(), items)}
    previous = previous_labels(rows[0].split) if rows else {}
    if previous:
        preds["previous"] = [previous[r.id] for r in rows]
    return preds


def save_as_previous(clf: ImportanceClassifier) -> None:
    """Keep the installed model's labels on every real dev and test turn and every statement of the preference check
    (ids and labels only), before a new model replaces it: the benchmark's "previous" rows."""
    from scripts.corpora import turn

    rows = [(r.id, r.split, r.role) for r in gold_turns() if r.split in ("dev", "test")]
    rows += [(item.statement.id, f"prefs_{split}", "user") for split in PREF_SPLITS for item in preference_items(split)]
    pred = labels_of(clf, [Utterance(turn(i).text, role) for i, _, role in rows])
    with PREVIOUS.open("w", encoding="utf-8") as fh:
        for (i, split, _), p in zip(rows, pred):
            fh.write(json.dumps({"id": i, "split": split, "model": clf.name, "prediction": p}) + "\n")
    print(f"{len(rows)} labels of {clf.name} -> {PREVIOUS.relative_to(ROOT)}")


def previous_labels(split: str) -> dict[str, str]:
    return {p["id"]: p["prediction"] for p in load_jsonl(PREVIOUS) if p["split"] == split} if PREVIOUS.is_file() else {}


# ------------------------------------------------------------------------------------------ preference check
PREF_SPLITS = ("test", "dev")


def preference_table(clf: ImportanceClassifier) -> list[str]:
    """CRITICAL recall on the preference check's statements (the user's message that opens each item), per corpus."""
    md = [
        "## The preference check's statements",
        "",
        "Real first-person statements of a standing like, dislike, need or refusal, chosen by annotators from"
        " Circa, ReDial, CaSiNo and Topical-Chat (data/long_real/prefs_*.jsonl; none trains the classifier, and"
        " nothing was chosen on test). Each is a user's message; the share labelled CRITICAL:",
        "",
    ]
    for split in PREF_SPLITS:
        items = preference_items(split)
        corpora = sorted({item.statement.corpus for item in items})
        statements = [Utterance(item.statement.text, "user") for item in items]
        preds = {"deployed": labels_of(clf, statements), "rules": labels_of(RuleClassifier(), statements)}
        previous = previous_labels(f"prefs_{split}")
        if previous:
            preds["previous"] = [previous[item.statement.id] for item in items]
        md += [
            f"**{split}** ({len(items)} statements)",
            "",
            "| classifier | all | " + " | ".join(corpora) + " |",
            "|---|---|" + "---|" * len(corpora),
        ]
        for name, pred in preds.items():
            cells = [share(pred)] + [
                share([p for p, item in zip(pred, items) if item.statement.corpus == c]) for c in corpora
            ]
            md.append(f"| {name} | " + " | ".join(cells) + " |")
        md.append("")
    return md


def share(pred: list[str]) -> str:
    hits = sum(p == "CRITICAL" for p in pred)
    return f"{hits / len(pred):.3f} ({hits}/{len(pred)})" if pred else "–"


# ------------------------------------------------------------------------------------------ own data
def own_table(clf: ImportanceClassifier, real_test: dict[str, float] | None) -> list[str]:
    """Our own test split and the held-out new_phrasings sets beside the real test figure."""
    sets = {"own test": load_jsonl(OWN / "test.jsonl")}
    sets |= {path.stem: load_jsonl(path) for path in sorted(OWN.glob("new_phrasings*.jsonl"))}
    md = [
        "## Our own data beside real turns",
        "",
        "Own test: the template-generated test split, 42% CRITICAL like the training data; `new_phrasings*`:"
        " hand-written held-out sets, one per earlier model, each in styles unseen then (their errors were read"
        " and later training data was written in their styles, so only the newest measured unseen styles when"
        " written; history in docs/data_card.md). Nothing was chosen on them for this model. The last column"
        " is the deployed macro-F1 minus its real test figure: the gap between our data and real chat.",
        "",
        "| set | messages | CRITICAL | deployed macro-F1 | CRIT recall | CRIT precision | rules macro-F1"
        " | CRIT recall | CRIT precision | deployed minus real test |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in sets.items():
        items = [Utterance(r["text"], r["role"]) for r in rows]
        gold = [r["label"] for r in rows]
        scores = [metrics(gold, labels_of(c, items)) for c in (clf, RuleClassifier())]
        gap = f"{scores[0]['macro_f1'] - real_test['macro_f1']:+.3f}" if real_test else "–"
        md.append(
            f"| {name} | {len(rows)} | {gold.count('CRITICAL')} | "
            + " | ".join(
                f"{m['macro_f1']:.3f} | {m['per_class']['CRITICAL']['recall']:.3f}"
                f" | {m['per_class']['CRITICAL']['precision']:.3f}"
                for m in scores
            )
            + f" | {gap} |"
        )
    if real_test:
        md.append(
            f"| **real test** (third-party) | {real_test['n']} | {real_test['critical']} | "
            f"{real_test['macro_f1']:.3f} | {real_test['recall']:.3f} | {real_test['precision']:.3f}"
            f" | {real_test['rules_macro_f1']:.3f} | {real_test['rules_recall']:.3f}"
            f" | {real_test['rules_precision']:.3f} | 0 |"
        )
    return md + [""]


def headline(rows: list[GoldTurn], preds: dict[str, list[str]]) -> dict[str, float]:
    """The real test figures the own-data table sets its sets against."""
    gold = [r.label for r in rows]
    model, rules = metrics(gold, preds["deployed"]), metrics(gold, preds["rules"])
    return {
        "n": len(rows),
        "critical": gold.count("CRITICAL"),
        "macro_f1": model["macro_f1"],
        "recall": model["per_class"]["CRITICAL"]["recall"],
        "precision": model["per_class"]["CRITICAL"]["precision"],
        "rules_macro_f1": rules["macro_f1"],
        "rules_recall": rules["per_class"]["CRITICAL"]["recall"],
        "rules_precision": rules["per_class"]["CRITICAL"]["precision"],
    }


# ------------------------------------------------------------------------------------------ speed
def timed(call: Callable[[], object], runs: int, before: Callable[[], object] | None = None) -> list[float]:
    """Milliseconds of ``call`` per run after one warm-up; ``before`` runs untimed ahead of each call."""
    out = []
    for run in range(runs + 1):
        if before:
            before()
        t = time.perf_counter()
        call()
        if run:
            out.append((time.perf_counter() - t) * 1000)
    return out


def speed_tables(runs: int, import_ms: float) -> list[str]:
    """Load time, one call of 30 messages cold and after the embedder's pass, and the files' sizes."""
    from tokenizers import Tokenizer

    from afm_local.local.components import local_classifier
    from afm_local.local.embedding import OnnxEmbedder

    root = models_dir()
    own_loads = timed(lambda: local_classifier(threads=1), 3)
    embedder = OnnxEmbedder("multilingual-e5-small", threads=1)
    head_loads = timed(lambda: local_classifier(threads=1, encoder=embedder), 5)
    clf = local_classifier(threads=1, encoder=embedder)
    test = load_jsonl(OWN / "test.jsonl")
    batch = [r for r in test if r["lang"] == "en"][: BATCH // 2] + [r for r in test if r["lang"] == "ru"][: BATCH // 2]
    items = [Utterance(r["text"], r["role"]) for r in batch]
    texts = [item.text for item in items]
    pieces = sum(
        len(e.ids)
        for e in Tokenizer.from_file(str(root / "multilingual-e5-small" / "tokenizer.json")).encode_batch(
            [f"passage: {t}" for t in texts]
        )
    )
    paths = {
        "cold: classify (the encoder runs inside)": timed(lambda: clf.classify(items), runs),
        "the embedder's pass: embed(texts, 'passage')": timed(lambda: embedder.embed(texts, "passage"), runs),
        "after the embedder's pass: classify (head only)": timed(
            lambda: clf.classify(items), runs, before=lambda: embedder.embed(texts, "passage")
        ),
        "rules alone": timed(lambda: RuleClassifier().classify(items), runs),
    }
    md = [
        f"## Speed: one call of {BATCH} messages, 1 thread",
        "",
        f"The first {BATCH // 2} English and {BATCH // 2} Russian messages of our own test split ({pieces} word pieces"
        f" with e5's passage prefix), median of {runs} runs after one warm-up. At ingest the engine embeds a"
        " message first and the classifier reads the hidden states that pass left behind, so the cost of"
        " classifying there is the last-but-one row, on top of an embedding the engine makes anyway.",
        "",
        "| path | median ms | min ms | max ms |",
        "|---|---|---|---|",
    ]
    md += [f"| {name} | {statistics.median(ms):.1f} | {min(ms):.1f} | {max(ms):.1f} |" for name, ms in paths.items()]
    md += [
        "",
        f"Load (sha256 checks and sessions): `local_classifier()` with its own e5 encoder"
        f" {statistics.median(own_loads):.0f} ms (median of 3); the head onto the engine's already loaded e5"
        f" {statistics.median(head_loads):.0f} ms (median of 5); importing onnxruntime and tokenizers took"
        f" {import_ms:.0f} ms once before.",
        "",
        "| file | bytes |",
        "|---|---|",
    ]
    for rel in (
        "importance/head.onnx",
        "importance/labels.json",
        "importance/model_card.json",
        "multilingual-e5-small/model.onnx",
        "multilingual-e5-small/tokenizer.json",
    ):
        md.append(f"| models/{rel} | {(root / rel).stat().st_size:,} |")
    return md + ["", "The e5 files are the engine's default embedder, shared: the classifier adds the head.", ""]


# ------------------------------------------------------------------------------------------ main
def header(clf: ImportanceClassifier) -> list[str]:
    config = json.loads((models_dir() / "importance" / "labels.json").read_text(encoding="utf-8"))
    card = json.loads((models_dir() / "importance" / "model_card.json").read_text(encoding="utf-8"))
    thresholds = config["decision"]["critical_threshold"]
    previous = load_jsonl(PREVIOUS)[0]["model"] if PREVIOUS.is_file() else "none kept"
    return [
        "# Importance classifier benchmark",
        "",
        f"Written by `python -m scripts.bench_classifier`. Machine: {platform.machine()}, {os.cpu_count()} cores"
        f" (shared, noisy), Python {platform.python_version()}, 1 thread everywhere.",
        "",
        f"* **deployed**: `local_classifier()`, `{clf.name}`: {card.get('summary', card['name'])}; CRITICAL when"
        f" p(CRITICAL) reaches the threshold of the message's role ({json.dumps(thresholds)}); rule overrides:"
        f" {', '.join(config['rule_overrides']) or 'none'} (docs/model_card.md).",
        "* **rules**: `RuleClassifier` alone, the fallback without a model.",
        f"* **previous**: the model deployed before, `{previous}`, from its kept labels"
        " (`data/real/previous_model_predictions.jsonl`): real turns and the preference check's statements.",
        "",
    ]


def real_sections(clf: ImportanceClassifier) -> tuple[list[str], dict[str, float]]:
    """The real test and dev tables, and the test headline the own-data table compares with."""
    turns = gold_turns()
    by_split = {split: [r for r in turns if r.split == split] for split in ("test", "dev")}
    preds = {split: real_predictions(clf, rows) for split, rows in by_split.items()}
    md = real_tables(
        "Real held-out test",
        "Third-party turns from dialogues no training or dev turn comes from (split by"
        " dialogue); nothing was chosen on them. False CRITICAL per audience: among ordinary turns (the random"
        " pools and the prompts drawn at random), gold not CRITICAL; hard negatives: the second sample's assistant"
        " and social turns drawn by words to look like preferences.",
        by_split["test"],
        preds["test"],
    )
    md += real_tables(
        "Real dev (used for choices)",
        "The deployed model's epoch, its CRITICAL thresholds (the lowest keeping"
        " false CRITICAL on ordinary dev turns within the card's limits) and its rule overrides were chosen on these"
        " turns, so its figures here are optimistic; the rules and the previous model were not tuned on them.",
        by_split["dev"],
        preds["dev"],
    )
    return md, headline(by_split["test"], preds["test"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per latency row")
    ap.add_argument("--out", type=Path, default=OUT_DIR / "classifier.md")
    ap.add_argument(
        "--save-as-previous",
        action="store_true",
        help="write the installed model's labels on the real dev and test turns as the previous model's and stop",
    )
    args = ap.parse_args()
    started = time.perf_counter()
    t = time.perf_counter()
    import onnxruntime  # noqa: F401  (imported once per process; timed apart from the model load)
    import tokenizers  # noqa: F401

    import_ms = (time.perf_counter() - t) * 1000

    from afm_local.local.components import local_classifier
    from afm_local.local.embedding import OnnxEmbedder

    clf = local_classifier(threads=1, encoder=OnnxEmbedder("multilingual-e5-small", threads=1))
    if clf.name == "rules":
        raise SystemExit("the importance model is not installed: run scripts/setup.sh first")
    if args.save_as_previous:
        save_as_previous(clf)
        return
    md, real_test = header(clf), None
    missing = corpora_missing()
    if missing:
        md += [f"**The real-turn tables are left out**: {missing}.", ""]
    else:
        sections, real_test = real_sections(clf)
        md += sections + preference_table(clf)
    md += own_table(clf, real_test)
    md += speed_tables(args.runs, import_ms)
    md += [f"Whole benchmark: {time.perf_counter() - started:.0f} s.", ""]
    text = "\n".join(md)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
