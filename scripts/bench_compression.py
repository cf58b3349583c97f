#!/usr/bin/env python
"""Benchmark message compression on our own messages and on real third-party ones.

Sets: ``own`` (``data/compression/messages.jsonl``, 46 messages written here, fact-dense on purpose),
``real-dev`` and ``real-test`` (``data/compression/real_messages.jsonl``: 60 and 140 turns of the
dialogue corpora in ``../shared/corpora``, read through ``scripts/corpora.py``; the test part is only
ever read in aggregate). Methods: the extractive compressor as it is, the extractive compressor of
``--baseline`` (the commit before sentence units, run from ``git archive`` in a child process), and
each GGUF model named by ``--models``, raw and behind ``GuardedCompressor``.

For every message and method it records the tokens out/in, whether a real compressed form came out
(shorter than the message), the facts of ``afm_local.text.facts`` kept (numbers with their units,
negations with their scope, preferences with their object, names), the ``SummaryGuard`` verdict and
MiniLM similarity, and the latency (1 thread). Figures are over the real compressed forms only: a
message that comes back whole keeps everything trivially. Judges' verdicts on the real test forms
(``data/compression/real_judgements.jsonl``, see ``scripts/judge_compression.py``) are tabled when
present. Writes ``docs/benchmarks/compression.md``, the own set's outputs with their text to
``data/compression/bench_outputs.jsonl`` and the real sets' figures, without text, to
``data/compression/bench_real.jsonl``; ``--report-only`` re-renders from those files.

    python -m scripts.bench_compression                                  # extractive, old and new
    python -m scripts.bench_compression --models qwen2.5-coder-0.5b-instruct --sets own real-dev real-test
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from afm_local.local.embedding import OnnxEmbedder
from afm_local.local.paths import models_dir
from afm_local.local.tokens import TiktokenCounter
from afm_local.text import facts
from afm_local.text.checks import SummaryGuard
from afm_local.text.extractive import ExtractiveCompressor
from afm_local.text.guarded import GuardedCompressor
from afm_local.text.topics import KeyphraseTopicer
from scripts.common import ROOT, CachedModel, form_sha, judged_figures, load_jsonl

OWN = ROOT / "data" / "compression" / "messages.jsonl"
REAL = ROOT / "data" / "compression" / "real_messages.jsonl"
OUTPUTS = ROOT / "data" / "compression" / "bench_outputs.jsonl"
REAL_OUTPUTS = ROOT / "data" / "compression" / "bench_real.jsonl"
JUDGEMENTS = ROOT / "data" / "compression" / "real_judgements.jsonl"
DOC = ROOT / "docs" / "benchmarks" / "compression.md"
BASELINE = "500527e"  # the last commit with the clause-and-prune compressor
SETS = ("own", "real-dev", "real-test")
KINDS = ("number", "negation", "preference", "name")
ACCEPT_SHARE = 0.5  # a model that the guard accepts on less than this share of messages is not loaded by default

_OLD_RUNNER = """
import json, sys, time
from afm_local.local.tokens import TiktokenCounter
from afm_local.text.extractive import ExtractiveCompressor
ratio = float(sys.argv[1])
compressor = ExtractiveCompressor(TiktokenCounter())
for line in sys.stdin:
    text = json.loads(line)
    t = time.perf_counter()
    out = compressor.compress(text, ratio).text
    print(json.dumps({"text": out, "seconds": time.perf_counter() - t}, ensure_ascii=False), flush=True)
"""


def load_sets(names: Iterable[str]) -> list[dict[str, Any]]:
    """Rows ``{id, set, lang, text}``; the real ones are read from the corpora, never from this repository."""
    rows: list[dict[str, Any]] = []
    names = list(names)
    if "own" in names:
        rows += [dict(id=r["id"], set="own", lang=r["lang"], text=r["text"]) for r in load_jsonl(OWN)]
    real = [n for n in names if n.startswith("real-")]
    if real:
        from scripts.corpora import turn

        rows += [
            dict(id=r["id"], set=f"real-{r['split']}", lang=r["lang"], text=turn(r["id"]).text)
            for r in load_jsonl(REAL)
            if f"real-{r['split']}" in real
        ]
    return rows


class Meter:
    """The figures of one form of one message: what every method's record holds."""

    def __init__(self, ratio: float) -> None:
        self.counter = TiktokenCounter()
        self.embedder = OnnxEmbedder(threads=1)
        self.guard = SummaryGuard(self.embedder, self.counter)
        self.ratio = ratio

    def record(self, row: dict[str, Any], method: str, text: str, seconds: float, **extra: Any) -> dict[str, Any]:
        source = row["text"]
        tokens_in, tokens_out = self.counter.count(source), self.counter.count(text)
        real = tokens_out < tokens_in and bool(text.strip())
        verdict = self.guard.check(source, text) if real else None
        out = dict(
            id=row["id"],
            set=row["set"],
            lang=row["lang"],
            method=method,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            real=real,
            seconds=seconds,
            ratio_asked=self.ratio,
            facts=facts.tally(source, text) if real else {},
            verdict=verdict.reason if verdict else "not shorter",
            similarity=self.guard.similarity(source, text) if real else 1.0,
            **extra,
        )
        if row["set"] == "own":
            out["text"] = text
        else:
            out["sha"] = form_sha(text)
        return out


def run_extractive(rows: list[dict[str, Any]], meter: Meter) -> list[dict[str, Any]]:
    compressor = ExtractiveCompressor(meter.counter)
    out = []
    for row in rows:
        t = time.perf_counter()
        text = compressor.compress(row["text"], meter.ratio).text
        out.append(meter.record(row, "extractive", text, time.perf_counter() - t))
    return out


def run_baseline(rows: list[dict[str, Any]], meter: Meter, ref: str) -> list[dict[str, Any]]:
    """The extractive compressor of commit ``ref``: its package extracted with ``git archive`` and run in
    a child process (so no copy of old code lives here), on the same messages and token counter."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", ref, "afm_local"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        env = {**os.environ, "PYTHONPATH": tmp, "AFM_MODELS_DIR": str(models_dir())}
        feed = "".join(json.dumps(r["text"], ensure_ascii=False) + "\n" for r in rows)
        done = subprocess.run(
            [sys.executable, "-c", _OLD_RUNNER, str(meter.ratio)],
            input=feed,
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        )
    results = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [meter.record(row, f"extractive (old, {ref})", r["text"], r["seconds"]) for row, r in zip(rows, results)]


def run_model(
    rows: list[dict[str, Any]], meter: Meter, name: str, threads: int, cache: Path | None
) -> list[dict[str, Any]]:
    """One GGUF model on every row: its raw summary, the guarded result with the target length, and the
    guarded result that also accepts a summary up to the extractive form's length (same model output),
    plus whether the guard accepted its topic label."""
    extractive = ExtractiveCompressor(meter.counter)
    rec = CachedModel(name, threads, cache)
    guarded = GuardedCompressor(rec, extractive, meter.guard, KeyphraseTopicer())
    out = []
    for i, row in enumerate(rows):
        rec.last_text, rec.last_s, guarded.last_verdict = "", 0.0, None
        result = guarded.compress(row["text"], meter.ratio)
        raw_verdict = guarded.last_verdict.reason if guarded.last_verdict else "short input"
        fallback = extractive.compress(row["text"], meter.ratio).text
        target = max(1, round(meter.counter.count(row["text"]) * meter.ratio))
        wide = meter.guard.check(row["text"], rec.last_text, target, meter.counter.count(fallback))
        topic, topic_method = guarded.topic_with_method(row["text"])
        common = dict(model=name, raw_verdict=raw_verdict, topic_accepted=topic_method.startswith("llama:"))
        out.append(
            meter.record(
                row,
                f"{name} raw",
                rec.last_text,
                rec.last_s,
                accepted=raw_verdict == "accepted",
                **common,
                topic=topic if row["set"] == "own" else None,
            )
        )
        out.append(
            meter.record(row, f"{name} guarded", result.text, rec.last_s, accepted=raw_verdict == "accepted", **common)
        )
        out.append(
            meter.record(
                row,
                f"{name} guarded (fallback length)",
                rec.last_text if wide.accepted else fallback,
                rec.last_s,
                accepted=wide.accepted,
                **common,
            )
        )
        print(
            f"{i + 1:>3}/{len(rows)} {row['set']:<9} {rec.last_s:5.1f}s {raw_verdict:<20} "
            f"{(rec.last_text[:80] if row['set'] != 'real-test' else '')!r}",
            flush=True,
        )
    return out


def summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per set and method: real forms, mean ratio over them, pooled fact shares, guard and latency."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for x in records:
        groups.setdefault((x["set"], x["method"]), []).append(x)
    table = []
    for (set_name, method), xs in groups.items():
        forms = [x for x in xs if x["real"]]
        shares = {}
        for kind in KINDS:
            kept = sum(x["facts"][kind][0] for x in forms)
            total = sum(x["facts"][kind][1] for x in forms)
            shares[kind] = (kept / total if total else None, total)
        table.append(
            dict(
                set=set_name,
                method=method,
                n=len(xs),
                forms=len(forms),
                ratio=statistics.mean(x["tokens_out"] / x["tokens_in"] for x in forms) if forms else None,
                shares=shares,
                whole=sum(all(k == t for k, t in x["facts"].values()) for x in forms),
                accepted=sum(x["verdict"] == "accepted" for x in forms),
                similarity=statistics.mean(x["similarity"] for x in forms) if forms else None,
                latency=statistics.median(x["seconds"] for x in xs),
                model_accepted=(sum(bool(x.get("accepted")) for x in xs) if "accepted" in xs[0] else None),
                topic_accepted=(sum(bool(x.get("topic_accepted")) for x in xs) if "topic_accepted" in xs[0] else None),
            )
        )
    order = {m: i for i, m in enumerate(dict.fromkeys(x["method"] for x in records))}
    return sorted(table, key=lambda t: (SETS.index(t["set"]), order[t["method"]]))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.1f} s"


def table_lines(table: list[dict[str, Any]], set_name: str) -> list[str]:
    lines = [
        "| method | messages | real forms | ratio out/in (forms) | numbers + unit | negation + scope | "
        "preference + object | names | every fact kept | guard accepts form | similarity | latency p50 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in (t for t in table if t["set"] == set_name):
        shares = " | ".join(f"{_pct(t['shares'][k][0])} ({t['shares'][k][1]})" for k in KINDS)
        forms = t["forms"] or 1
        lines.append(
            f"| {t['method']} | {t['n']} | {t['forms']} | {'–' if t['ratio'] is None else format(t['ratio'], '.2f')} | "
            f"{shares} | {t['whole'] / forms:.0%} | {t['accepted'] / forms:.0%} | "
            f"{'–' if t['similarity'] is None else format(t['similarity'], '.3f')} | {_ms(t['latency'])} |"
        )
    return lines


def model_lines(table: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[str]:
    """Per model and set: how often the guard accepted its summary and its topic, and why it refused."""
    rows = [t for t in table if t["method"].endswith(" guarded")]
    if not rows:
        return []
    reasons = [
        "accepted",
        "not shorter",
        "too long",
        "cut off",
        "words dropped",
        "dropped number",
        "dropped unit",
        "invented number",
        "dropped negation",
        "dropped preference",
        "dropped name",
        "low similarity",
    ]
    lines = [
        "## The GGUF model behind the guard",
        "",
        "Share of messages whose raw summary `SummaryGuard` accepts (target length 0.35 × 1.2 + 2 tokens; "
        "*fallback length* also accepts up to the extractive form's length), its topic labels accepted, and "
        "the first failed check of every raw summary.",
        "",
        "| model | set | summary accepted | accepted (fallback length) | topic accepted | latency p50 | "
        + " | ".join(reasons)
        + " | other |",
        "|---|---|---:|---:|---:|---:|" + "---:|" * (len(reasons) + 1),
    ]
    for t in rows:
        model = t["method"][: -len(" guarded")]
        xs = [x for x in records if x["set"] == t["set"] and x["method"] == f"{model} raw"]
        wide = next(w for w in table if w["set"] == t["set"] and w["method"] == f"{model} guarded (fallback length)")
        c = Counter(x["raw_verdict"] for x in xs)
        other = sum(v for k, v in c.items() if k not in reasons)
        lines.append(
            f"| {model} | {t['set']} | {t['model_accepted'] / t['n']:.0%} | {wide['model_accepted'] / t['n']:.0%} | "
            f"{t['topic_accepted'] / t['n']:.0%} | {_ms(statistics.median(x['seconds'] for x in xs))} | "
            + " | ".join(str(c.get(k, 0)) for k in reasons)
            + f" | {other} |"
        )
    lines.append("")
    for model in dict.fromkeys(t["method"][: -len(" guarded")] for t in rows):
        real = [
            x for x in records if x["set"].startswith("real-") and x["method"] == f"{model} guarded (fallback length)"
        ]
        if not real:
            continue
        share = sum(x["accepted"] for x in real) / len(real)
        verdict = (
            "earns its place: it may be loaded by default"
            if share >= ACCEPT_SHARE
            else "is not loaded by default (`AFMConfig.compressor_model` is `None`); it stays available by name"
        )
        lines.append(
            f"**{model}**: the guard accepts its summary for {share:.0%} of the {len(real)} real messages even "
            f"with the fallback length, against the {ACCEPT_SHARE:.0%} a default model needs, so it {verdict}."
        )
    return lines + [""]


def judged_lines(records: list[dict[str, Any]]) -> list[str]:
    """The judges' figures on the real test forms, when their verdicts have been imported."""
    if not JUDGEMENTS.is_file():
        return [
            "## Judged (real test set)",
            "",
            "No judgements imported yet (`python -m scripts.judge_compression import CODE CODE`).",
            "",
        ]
    judged = load_jsonl(JUDGEMENTS)
    current = {(x["id"], x["method"]): x["sha"] for x in records if x["set"] == "real-test" and x["real"]}
    fresh = [j for j in judged if current.get((j["id"], j["method"])) == j["sha"]]
    lines = [
        "## Judged (real test set)",
        "",
        f"{len(judged)} forms judged by two independent judges ({len(fresh)} still the form the method makes "
        "now; the figures are over those), shown to them in a shuffled order without the method. Per "
        "judgement: the rate of *yes* per judge, agreement, Cohen's kappa and the share both judges call *yes*.",
        "",
    ]
    for method in dict.fromkeys(j["method"] for j in fresh):
        lines += [f"**{method}**", ""] + judged_figures([j for j in fresh if j["method"] == method]) + [""]
    return lines


def examples(records: list[dict[str, Any]], ids: tuple[str, ...] = ("m03", "m11", "m21")) -> list[str]:
    lines = ["## Examples (own set)", ""]
    for mid in ids:
        xs = [x for x in records if x["set"] == "own" and x["id"] == mid]
        if not xs:
            continue
        lines.append(f"Message `{mid}`:")
        lines.append("")
        for x in xs:
            lines.append(f"- **{x['method']}** ({x['verdict']}): {x['text']}")
        lines.append("")
    return lines


def render(records: list[dict[str, Any]]) -> str:
    table = summarise(records)
    ratio = records[0]["ratio_asked"]
    lines = [
        "# Compression benchmark",
        "",
        f"`python -m scripts.bench_compression`, target ratio {ratio}, o200k_base tokens, one thread. A *real form* "
        "is a compressed form shorter than its message; a message that cannot be shortened faithfully comes "
        "back whole (the engine then sends it Full or as a placeholder) and is not counted. Ratio, facts, guard "
        "and similarity are over the real forms; facts are pooled (kept / total in brackets) as "
        "`afm_local/text/facts.py` defines them; *every fact kept* is the share of forms that lose none; "
        "*guard accepts form* runs `SummaryGuard` (no target length) on the form; similarity is MiniLM-L6 to "
        "the source. Latency is the median per message over all messages.",
        "",
        "The real messages are `python -m scripts.sample_compression` (seed 20261205): one turn of 25 to 320 "
        "tokens per dialogue, half user and half assistant where a corpus has both, 150 English (MultiWOZ, SGD, "
        "Taskmaster-4, OASST, Dolly, HH-RLHF, Topical-Chat, CaSiNo) and 50 Russian (MultiWOZ machine "
        "translation, anekdot dialogues); the repository keeps their ids, never their text. The old compressor "
        f"is run from `git archive {BASELINE}` on the same messages.",
        "",
    ]
    titles = {
        "own": "Own messages (`data/compression/messages.jsonl`, written to carry constraints)",
        "real-dev": "Real messages, dev part (read and tuned on)",
        "real-test": "Real messages, test part (never read one by one)",
    }
    for set_name in SETS:
        if any(t["set"] == set_name for t in table):
            lines += [f"## {titles[set_name]}", ""] + table_lines(table, set_name) + [""]
    lines += judged_lines(records) + model_lines(table, records) + examples(records)
    return "\n".join(lines)


def calibrate() -> int:
    """The figures the guard's similarity thresholds were chosen from: cosine of each own message with its
    hand-written faithful summary (positives) and with the closest summary of another message of the same
    language (hardest negatives); the same for KeyphraseTopicer labels."""
    import numpy as np

    rows = load_jsonl(OWN)
    embedder = OnnxEmbedder(threads=1)
    src = embedder.embed([r["text"] for r in rows])
    sims = src @ embedder.embed([r["summary"] for r in rows]).T
    topics = src @ embedder.embed([KeyphraseTopicer().topic(r["text"]) for r in rows]).T
    print("| set | lang | positives min / p5 / median | hardest negatives max / p95 / median |")
    print("|---|---|---|---|")
    for label, m in (("summary", sims), ("keyphrase topic", topics)):
        for lang in ("en", "ru"):
            idx = [i for i, r in enumerate(rows) if r["lang"] == lang]
            pos = [m[i, i] for i in idx]
            neg = [max(m[i, j] for j in idx if j != i) for i in idx]
            print(
                f"| {label} | {lang} | {min(pos):.2f} / {np.percentile(pos, 5):.2f} / {np.median(pos):.2f} | "
                f"{max(neg):.2f} / {np.percentile(neg, 95):.2f} / {np.median(neg):.2f} |"
            )
    guard = SummaryGuard(embedder, TiktokenCounter())
    verdicts = Counter(guard.check(r["text"], r["summary"]).reason for r in rows)
    print(f"guard on the hand-written summaries: {dict(verdicts)}")
    return 0


def saved() -> list[dict[str, Any]]:
    return [x for path in (OUTPUTS, REAL_OUTPUTS) if path.is_file() for x in load_jsonl(path)]


def merge(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``old`` without the sets and methods that ``new`` ran again, then ``new``."""
    ran = {(x["set"], x["method"]) for x in new}
    return [x for x in old if (x["set"], x["method"]) not in ran] + new


def write(records: list[dict[str, Any]]) -> None:
    """Own-set records (with text) and real-set records (without) to their files."""
    for path, own in ((OUTPUTS, True), (REAL_OUTPUTS, False)):
        mine = [x for x in records if (x["set"] == "own") == own]
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in mine), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS)
    ap.add_argument("--models", nargs="*", default=[], help="manifest names of GGUF models to run behind the guard")
    ap.add_argument("--ratio", type=float, default=0.35, help="target share of tokens (AFMConfig default 0.35)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--model-cache",
        type=Path,
        default=None,
        help="JSONL cache of the models' outputs, outside the repository (it holds third-party text)",
    )
    ap.add_argument("--baseline", default=BASELINE, help="commit of the old extractive compressor ('' to skip)")
    ap.add_argument("--report-only", action="store_true", help="re-render the doc from the outputs files")
    ap.add_argument("--no-docs", action="store_true", help="print the report but write no file")
    ap.add_argument("--calibrate", action="store_true", help="print the guard threshold calibration figures")
    args = ap.parse_args(argv)
    if args.calibrate:
        return calibrate()
    records = saved()
    if not args.report_only:
        rows = load_sets(args.sets)
        meter = Meter(args.ratio)
        runs: list[Callable[[], list[dict[str, Any]]]] = [lambda: run_extractive(rows, meter)]
        if args.baseline:
            runs.append(lambda: run_baseline(rows, meter, args.baseline))
        runs += [lambda name=name: run_model(rows, meter, name, args.threads, args.model_cache) for name in args.models]
        records = merge(records, [x for run in runs for x in run()])
        if not args.no_docs:
            write(records)
    text = render(records)
    print(text)
    if not args.no_docs:
        DOC.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
