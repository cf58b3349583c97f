#!/usr/bin/env python3
"""Benchmark importance classifiers on the test split and on the hand-written new_phrasings set.

Compared:
  * rules     - ``afm_local.text.rules.RuleClassifier`` alone
  * zero-shot - MiniLM sentence embeddings, nearest class prototype (label descriptions + a few examples)
  * model     - the trained ONNX classifier (``afm_local.local.importance``)
  * model+rules - model, then a rule hard-constraint hit raises the label to CRITICAL (never lowers it)

Prints markdown tables and writes them to docs/benchmarks/classifier.md. Everything runs on 1 thread.
Usage:  python -m scripts.bench_classifier [--runs 20] [--out docs/benchmarks/classifier.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
from tokenizers import Tokenizer

from scripts.common import ROOT, LABELS, load_jsonl, metrics
from afm_local.text.classifier import LayeredClassifier
from afm_local.local.embedding import OnnxEmbedder
from afm_local.local.importance import OnnxImportanceClassifier
from afm_local.text.lexicon import detect_language as detect_lang
from afm_local.text.rules import RuleClassifier
from afm_local.core.types import Classification, Importance


PROTOTYPES = {
    "CRITICAL": [
        "a strict constraint that must not be violated",
        "I am allergic to peanuts",
        "I take warfarin, a blood thinner",
        "the budget is strictly capped, we cannot exceed it",
        "the hard deadline cannot move",
        "by law we must keep the data in the EU",
        "never do this, it is forbidden",
        "I am pregnant",
        "I use a wheelchair",
        "I don't eat pork for religious reasons",
        "У меня аллергия на орехи.",
        "Бюджет строго ограничен, превышать нельзя.",
        "Это запрещено законом.",
    ],
    "RELEVANT": [
        "a plan, an option, a question or a preference",
        "what hotels are near the old town?",
        "I would prefer a window seat",
        "the budget is around this amount, flexible",
        "we are considering Python for the backend",
        "it would be nice to have live music",
        "I don't like mushrooms much",
        "Какие отели есть рядом с центром?",
        "Хотелось бы место у окна.",
        "Бюджет примерно такой, можно чуть больше.",
    ],
    "TRIVIAL": [
        "small talk, thanks, acknowledgement",
        "thanks!",
        "ok, sounds good",
        "you're welcome!",
        "hi there",
        "haha nice",
        "спасибо!",
        "ок, понятно",
        "привет",
        "пожалуйста!",
    ],
}


# ------------------------------------------------------------------------------------------ zero-shot
class ZeroShotClassifier:
    name = "zero-shot"

    def __init__(self, embedder) -> None:
        self.emb = embedder
        self.centroids = []
        for lab in LABELS:
            v = np.asarray(self.emb.embed(PROTOTYPES[lab])).mean(0)
            self.centroids.append(v / np.linalg.norm(v))
        self.centroids = np.stack(self.centroids)

    def classify(self, texts):
        out = []
        for s in range(0, len(texts), 64):
            sims = np.asarray(self.emb.embed(texts[s:s + 64])) @ self.centroids.T
            for row in sims:
                p = np.exp(row * 20)
                p /= p.sum()
                lab = LABELS[int(row.argmax())]
                out.append(Classification(Importance(lab), dict(zip(LABELS, map(float, p))), "zero-shot"))
        return out


class FullEnsemble:
    """The shipped model without its shortcut: the encoder runs on every message. Same labels (a test
    checks it); here only to show what skipping the settled messages saves."""

    name = "model, encoder on every message"

    def __init__(self, model: OnnxImportanceClassifier) -> None:
        self.model = model

    def classify(self, texts):
        p, langs = self.model.full_probs(texts)
        return [Classification(Importance(lab), {}, "model") for lab in self.model.decide(p, langs)]


def encoder_runs(model: OnnxImportanceClassifier, texts: list[str]) -> int:
    """How many of ``texts`` the shipped model runs its encoder on."""
    return len(model.encoder_rows(texts, model.ngram_probs(texts), [detect_lang(t) for t in texts]))


# ------------------------------------------------------------------------------------------ metrics
def latency(clf, texts, runs):
    clf.classify(texts)  # warm-up
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        clf.classify(texts)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts), min(ts), max(ts)


def conversation_table(clfs: dict, folder: Path) -> list[str]:
    """CRITICAL detection inside whole conversations: the scenarios of bench_quality, written by
    another hand than the training data and never used to fit or choose anything. Their constraint
    messages are CRITICAL; every other turn (travel talk, facts, prices, thanks) is not. This is where
    over-flagging shows: each false CRITICAL costs budget at Full in every context."""
    files = sorted(p for p in folder.glob("*.json") if p.name != "index.json")
    if not files:
        return []
    rows = []
    for path in files:
        sc = json.loads(path.read_text(encoding="utf-8"))
        crit = set(sc.get("constraint_indexes", []))
        rows += [(m["content"], i in crit) for i, m in enumerate(sc["messages"])]
    md = [f"## Constraint detection in {len(files)} benchmark conversations ({len(rows)} messages, "
          f"{sum(c for _, c in rows)} constraints)", "",
          "| classifier | CRIT recall | CRIT precision | false CRITICAL per 100 other messages |", "|---|---|---|---|"]
    for name, clf in clfs.items():
        pred = [c.label is Importance.CRITICAL for c in clf.classify([t for t, _ in rows])]
        tp = sum(p and c for p, (_, c) in zip(pred, rows))
        fp = sum(p and not c for p, (_, c) in zip(pred, rows))
        pos = sum(c for _, c in rows)
        md.append(f"| {name} | {tp / max(1, pos):.3f} | {tp / max(1, tp + fp):.3f} | {100 * fp / max(1, len(rows) - pos):.1f} |")
    return md + [""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", type=Path, default=ROOT / "models" / "importance")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "importance")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "classifier.md")
    args = ap.parse_args()

    sets = {"test": load_jsonl(args.data / "test.jsonl")}
    sets |= {path.stem: load_jsonl(path) for path in sorted(args.data.glob("new_phrasings*.jsonl"))}
    t = time.perf_counter()
    import onnxruntime  # noqa: F401  (imported once per process; timed apart from the model load)
    import tokenizers  # noqa: F401

    import_ms = (time.perf_counter() - t) * 1000
    loads = []
    for _ in range(5):
        t = time.perf_counter()
        model = OnnxImportanceClassifier(args.model_dir, threads=1)
        loads.append((time.perf_counter() - t) * 1000)
    load_ms = statistics.median(loads)
    emb = OnnxEmbedder(threads=1)
    clfs = {"rules": RuleClassifier(), "zero-shot": ZeroShotClassifier(emb), "model": model,
            "model+rules": LayeredClassifier(model)}

    # a realistic batch of 30: the first 15 English and 15 Russian test messages
    batch = [r["text"] for r in sets["test"] if r["lang"] == "en"][:15] + \
            [r["text"] for r in sets["test"] if r["lang"] == "ru"][:15]

    md = ["# Importance classifier benchmark", "",
          f"Written by `python -m scripts.bench_classifier`. Machine: {platform.machine()}, {os.cpu_count()} cores (shared, noisy), "
          f"Python {platform.python_version()}, 1 thread everywhere. Model load (sha256 checks and both sessions): {load_ms:.0f} ms,"
          f" median of 5; importing onnxruntime and tokenizers took {import_ms:.0f} ms once before.",
          f"Zero-shot embedder: {emb.name} (afm_local.local.embedding.OnnxEmbedder); prototypes = label descriptions + example sentences (see the script).",
          "Decision rule and ensemble weights were chosen on the validation split; no model was fitted on test or"
          " new_phrasings. The held-out sets were written one per model round: the errors on each were read"
          " after it was scored, and later training data was written in its styles, so only the newest set"
          " measures unseen styles (history in docs/data_card.md).", ""]
    results = {}
    for sname, rows in sets.items():
        texts = [r["text"] for r in rows]
        preds = {name: [c.label.value for c in clf.classify(texts)] for name, clf in clfs.items()}
        results[sname] = preds
        md += [f"## {sname} ({len(rows)} messages)", "",
               "| classifier | lang | n | accuracy | macro-F1 | CRIT P | CRIT R | REL P | REL R | TRIV P | TRIV R |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
        for name in clfs:
            for lang in ("en", "ru", "all"):
                idx = [i for i, r in enumerate(rows) if lang == "all" or r["lang"] == lang]
                m = metrics([rows[i]["label"] for i in idx], [preds[name][i] for i in idx])
                md.append(f"| {name} | {lang} | {m['n']} | {m['accuracy']:.3f} | {m['macro_f1']:.3f} | "
                          + " | ".join(f"{m['per_class'][c]['precision']:.3f} | {m['per_class'][c]['recall']:.3f}" for c in LABELS) + " |")
        md.append("")
        for name in ("model", "model+rules"):
            m = metrics([r["label"] for r in rows], preds[name])
            md += [f"Confusion matrix, {name}, {sname} (rows = true, columns = predicted):", "",
                   "| true \\ pred | " + " | ".join(LABELS) + " |", "|---|---|---|---|"]
            md += [f"| {t} | " + " | ".join(str(m["confusion"][t][p]) for p in LABELS) + " |" for t in LABELS]
            md.append("")
        if sname.startswith("new_phrasings"):
            wrong = [(r, preds["model"][i]) for i, r in enumerate(rows) if preds["model"][i] != r["label"]]
            md += [f"Model errors on {sname} ({len(wrong)}):", ""]
            md += [f"- [{r['lang']}] true {r['label']}, predicted {p}: {r['text'][:110].replace(chr(10), ' / ')!r}"
                   for r, p in wrong]
            md.append("")

    md += conversation_table(clfs, ROOT / "data" / "scenarios")
    md += ["## Latency: one batch of 30 messages (15 en + 15 ru from test), 1 thread", "",
           f"Median of {args.runs} runs after one warm-up.", "",
           "| classifier | median ms | min ms | max ms |", "|---|---|---|---|"]
    for name, clf in {**clfs, "model, encoder on every message": FullEnsemble(model)}.items():
        med, lo, hi = latency(clf, batch, args.runs)
        md.append(f"| {name} | {med:.1f} | {lo:.1f} | {hi:.1f} |")
    n_enc = encoder_runs(model, batch)
    tokens = sum(len(e.ids) for e in Tokenizer.from_file(str(args.model_dir / "tokenizer.json")).encode_batch(batch))
    md += ["", f"The encoder ran on {n_enc} of the 30 messages; for the others the n-gram model alone settles the label"
           " (the encoder's weight in the ensemble could not change it, or the message is longer than the encoder's"
           " window, where it does not vote). Encoder input of the whole batch, were it run on all:"
           f" {tokens} word pieces. Share of messages that need the encoder: "
           + ", ".join(f"{sname} {encoder_runs(model, [r['text'] for r in rows]) / len(rows):.0%}"
                       for sname, rows in sets.items()) + "."]
    size = sum(p.stat().st_size for p in args.model_dir.iterdir() if p.is_file())
    md += ["", f"Model folder size: {size / 1e6:.2f} MB ({args.model_dir.relative_to(ROOT) if args.model_dir.is_relative_to(ROOT) else args.model_dir}).", ""]
    text = "\n".join(md)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
