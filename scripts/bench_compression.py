#!/usr/bin/env python
"""Benchmark message compression: extractive vs each installed GGUF model, raw and guarded.

For every message of ``data/compression/messages.jsonl`` (English and Russian) and every method it
measures: compression ratio (o200k tokens out / in), share of the source's numbers kept, share of its
negations kept, MiniLM cosine similarity to the source, guard acceptance, and latency (1 thread).
Topic labels (3 to 6 words) are measured too. Writes markdown tables to
``docs/benchmarks/compression.md``, a plot to ``docs/benchmarks/compression.png`` and every output
to ``data/compression/bench_outputs.jsonl`` (``--report-only`` re-renders from that file).

    python -m scripts.bench_compression                 # all installed GGUF models, ratio 0.35
    python -m scripts.bench_compression --models qwen2.5-coder-0.5b-instruct --limit 10
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any


from scripts.common import ROOT
from afm_local.local import model_files as models
from afm_local.text.compression import ExtractiveCompressor, KeyphraseTopicer
from afm_local.local.embedding import OnnxEmbedder
from afm_local.text.guard import GuardedCompressor, SummaryGuard, negation_count, number_forms
from afm_local.local.tokens import TiktokenCounter

DATA = ROOT / "data" / "compression" / "messages.jsonl"
OUTPUTS = ROOT / "data" / "compression" / "bench_outputs.jsonl"
DOC = ROOT / "docs" / "benchmarks" / "compression.md"
PLOT = ROOT / "docs" / "benchmarks" / "compression.png"


class Recording:
    """Wraps the model so one call serves both the raw and the guarded measurement."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.last_text = ""
        self.last_topic = ""
        self.last_s = 0.0
        self.last_topic_s = 0.0

    def compress(self, text: str, ratio: float):
        t = time.perf_counter()
        out = self.inner.compress(text, ratio)
        self.last_s, self.last_text = time.perf_counter() - t, out.text
        return out

    def topic(self, text: str) -> str:
        t = time.perf_counter()
        out = self.inner.topic(text)
        self.last_topic_s, self.last_topic = time.perf_counter() - t, out
        return out


def numbers_kept(source: str, out: str) -> tuple[int, int]:
    src = number_forms(source)
    have = set().union(*number_forms(out)) if number_forms(out) else set()
    return sum(bool(f & have) for f in src), len(src)


def negations_kept(source: str, out: str) -> tuple[int, int]:
    need = negation_count(source)
    return min(need, negation_count(out)), need


def installed_gguf() -> list[str]:
    specs = models.load_manifest()
    names = [n for n, s in specs.items() if s.kind == "gguf"]
    ok = {st.name for st in models.verify(names=names) if st.state == "ok"}
    return [n for n in names if n in ok]


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from afm_local.local.llama import LlamaCppCompressor

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.limit:
        rows = rows[: args.limit]
    counter = TiktokenCounter()
    embedder = OnnxEmbedder(threads=1)
    guard = SummaryGuard(embedder, counter)
    extractive = ExtractiveCompressor(counter)
    keyphrase = KeyphraseTopicer()
    records: list[dict[str, Any]] = []
    sources = {r["id"]: r for r in rows}
    keep: list[dict[str, Any]] = []
    out_path = Path(args.out)
    if args.append and out_path.is_file():
        run_models = set(args.models or installed_gguf())
        keep = [x for x in map(json.loads, out_path.read_text(encoding="utf-8").splitlines())
                if x.get("model") and x["model"] not in run_models]
    sink = None if args.no_write else out_path.open("w", encoding="utf-8")
    for x in keep:
        sink and sink.write(json.dumps(x, ensure_ascii=False) + "\n")

    def finish(x: dict[str, Any]) -> None:
        src = sources[x["id"]]["text"]
        vecs = embedder.embed([src, x["text"] or " "])
        x["similarity"] = float(vecs[0] @ vecs[1]) if x["text"] else 0.0
        x["tokens_in"], x["tokens_out"] = counter.count(src), counter.count(x["text"])
        x["numbers"] = numbers_kept(src, x["text"])
        x["negations"] = negations_kept(src, x["text"])
        x["ratio"] = args.ratio
        records.append(x)
        if sink:
            sink.write(json.dumps(x, ensure_ascii=False) + "\n")
            sink.flush()

    for r in rows:
        t = time.perf_counter()
        out = extractive.compress(r["text"], args.ratio).text
        dt = time.perf_counter() - t
        t = time.perf_counter()
        topic = keyphrase.topic(r["text"])
        tdt = time.perf_counter() - t
        target = max(1, round(counter.count(r["text"]) * args.ratio))
        verdict = guard.check(r["text"], out, target)
        tv = guard.check_topic(r["text"], topic)
        finish(dict(id=r["id"], lang=r["lang"], method="extractive", text=out, seconds=dt,
                            accepted=verdict.accepted, reason=verdict.reason, topic=topic, topic_seconds=tdt,
                            topic_accepted=tv.accepted))
    names = args.models or installed_gguf()
    for name in names:
        print(f"== {name}", flush=True)
        t = time.perf_counter()
        model = LlamaCppCompressor.from_manifest(name, threads=args.threads)
        load_s = time.perf_counter() - t
        rec = Recording(model)
        guarded = GuardedCompressor(rec, extractive, guard, keyphrase)
        for i, r in enumerate(rows):
            rec.last_text, rec.last_s = "", 0.0
            t = time.perf_counter()
            g = guarded.compress(r["text"], args.ratio)
            g_s = time.perf_counter() - t
            raw_verdict = guarded.last_verdict
            t = time.perf_counter()
            g_topic, g_topic_method = guarded.topic_with_method(r["text"])
            g_topic_s = time.perf_counter() - t
            raw_accepted = g.method.startswith("llama:")
            base = dict(id=r["id"], lang=r["lang"], model=name, load_seconds=load_s)
            finish(dict(base, method=f"{name} raw", text=rec.last_text, seconds=rec.last_s,
                                accepted=raw_accepted, reason=raw_verdict.reason if raw_verdict else "short input",
                                topic=rec.last_topic, topic_seconds=rec.last_topic_s,
                                topic_accepted=g_topic_method.startswith("llama:")))
            finish(dict(base, method=f"{name} guarded", text=g.text, seconds=g_s, accepted=raw_accepted,
                                reason=g.method, topic=g_topic, topic_seconds=g_topic_s,
                                topic_accepted=g_topic_method.startswith("llama:")))
            print(f"{i + 1:>3}/{len(rows)} {rec.last_s:5.1f}s {(raw_verdict.reason if raw_verdict else '-'):<16} "
                  f"{rec.last_text[:90]!r}", flush=True)
        print(f"guard counts {name}: {guarded.stats()}", flush=True)
        del model, rec, guarded
    if sink:
        sink.close()
    return keep + records


def calibrate() -> int:
    """The figures the guard's similarity thresholds were chosen from: cosine of each message with its
    hand-written faithful summary (positives) and with the closest summary of another message of the
    same language (hardest negatives); the same for KeyphraseTopicer labels."""
    import numpy as np

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    embedder, counter = OnnxEmbedder(threads=1), TiktokenCounter()
    guard = SummaryGuard(embedder, counter)
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
            print(f"| {label} | {lang} | {min(pos):.2f} / {np.percentile(pos, 5):.2f} / {np.median(pos):.2f} | "
                  f"{max(neg):.2f} / {np.percentile(neg, 95):.2f} / {np.median(neg):.2f} |")
    verdicts = Counter(guard.check(r["text"], r["summary"], counter.count(r["text"])).reason for r in rows)
    print(f"guard on the hand-written summaries (length limit = source length): {dict(verdicts)}")
    return 0


def derive_fallback_policy(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for ``GuardedCompressor(length_policy="fallback")``, computed from the recorded raw outputs
    (decoding is greedy, so the model would produce the same text): accept a raw summary up to the
    length of the extractive form as well as up to the target."""
    records = [x for x in records if not x["method"].endswith("guarded (fallback length)")]
    embedder, counter = OnnxEmbedder(threads=1), TiktokenCounter()
    guard = SummaryGuard(embedder, counter)
    rows = {json.loads(line)["id"]: json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()}
    extractive = {x["id"]: x for x in records if x["method"] == "extractive"}
    todo = [x for x in records if "topic_similarity" not in x]
    if todo:
        a = embedder.embed([rows[x["id"]]["text"] for x in todo])
        b = embedder.embed([x.get("topic") or " " for x in todo])
        for x, u, v in zip(todo, a, b):
            x["topic_similarity"] = float(u @ v) if x.get("topic") else 0.0
    guarded = {(x["id"], x["method"][:-8]): x for x in records if x["method"].endswith(" guarded")}
    out = []
    for x in records:
        if not x["method"].endswith(" raw") or x["id"] not in extractive:
            continue
        src, ex = rows[x["id"]]["text"], extractive[x["id"]]
        target = max(1, round(counter.count(src) * x["ratio"]))
        t = time.perf_counter()
        verdict = guard.check(src, x["text"], target, counter.count(ex["text"]))
        guard_s = time.perf_counter() - t
        chosen = x if verdict.accepted else ex
        y = dict(x, method=x["method"][:-4] + " guarded (fallback length)", text=chosen["text"],
                 accepted=verdict.accepted, seconds=x["seconds"] + guard_s,
                 reason=x["method"][:-4] if verdict.accepted else f"extractive(guard:{verdict.reason})")
        for key in ("similarity", "tokens_out", "numbers", "negations"):
            y[key] = chosen[key]
        g = guarded.get((x["id"], x["method"][:-4]))
        if g:  # the topic path does not depend on the length policy
            for key in ("topic", "topic_seconds", "topic_accepted", "topic_similarity"):
                y[key] = g.get(key, y.get(key))
        out.append(y)
    # keep the table order: each model's rows together
    ordered = []
    for x in records:
        ordered.append(x)
    for y in out:
        ordered.append(y)
    return ordered


def summarise(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by: dict[str, list[dict[str, Any]]] = {}
    for x in records:
        by.setdefault(x["method"], []).append(x)
    table = []
    for method, xs in by.items():
        nk, nt = sum(x["numbers"][0] for x in xs), sum(x["numbers"][1] for x in xs)
        gk, gt = sum(x["negations"][0] for x in xs), sum(x["negations"][1] for x in xs)
        table.append(dict(
            method=method,
            n=len(xs),
            ratio=statistics.mean(x["tokens_out"] / x["tokens_in"] for x in xs),
            numbers=nk / nt if nt else 1.0,
            negations=gk / gt if gt else 1.0,
            similarity=statistics.mean(x["similarity"] for x in xs),
            sim_en=statistics.mean([x["similarity"] for x in xs if x["lang"] == "en"] or [0]),
            sim_ru=statistics.mean([x["similarity"] for x in xs if x["lang"] == "ru"] or [0]),
            accepted=statistics.mean(bool(x["accepted"]) for x in xs),
            latency=statistics.median(x["seconds"] for x in xs),
            topic_accepted=statistics.mean(bool(x["topic_accepted"]) for x in xs),
            topic_latency=statistics.median(x["topic_seconds"] for x in xs),
            topic_similarity=statistics.mean(x.get("topic_similarity", 0.0) for x in xs),
        ))
    models_order: list[str] = []
    for x in records:
        m = x.get("model")
        if m and m not in models_order:
            models_order.append(m)
    variants = ["raw", "guarded", "guarded (fallback length)"]

    def key(t: dict[str, Any]) -> tuple[int, int]:
        if t["method"] == "extractive":
            return (-1, 0)
        model, _, variant = t["method"].partition(" ")
        return (models_order.index(model) if model in models_order else 99,
                variants.index(variant) if variant in variants else 9)

    return sorted(table, key=key)


def choose_default(table: list[dict[str, Any]]) -> dict[str, Any]:
    """The guarded model that is clearly better than extractive (similarity +0.01 or ratio -0.03) at no
    loss of numbers or negations and no longer output; extractive otherwise (it is also ~10^4 times
    faster)."""
    ex = next(t for t in table if t["method"] == "extractive")
    best = ex
    for t in table:
        if "guarded" not in t["method"]:
            continue
        if t["numbers"] + 1e-9 < ex["numbers"] or t["negations"] + 1e-9 < ex["negations"]:
            continue
        if t["ratio"] > ex["ratio"] + 0.005:
            continue
        if t["similarity"] < ex["similarity"] + 0.01 and t["ratio"] > ex["ratio"] - 0.03:
            continue
        if (t["similarity"], -t["ratio"]) > (best["similarity"], -best["ratio"]):
            best = t
    return best


def choose_topic_default(table: list[dict[str, Any]]) -> dict[str, Any]:
    """Highest topic similarity among keyphrase (the extractive row) and the guarded models."""
    cands = [t for t in table if t["method"] == "extractive" or t["method"].endswith(" guarded")]
    return max(cands, key=lambda t: t["topic_similarity"])


def render(records: list[dict[str, Any]], args: argparse.Namespace) -> str:
    table = summarise(records)
    ratio = records[0]["ratio"]
    n_msgs = len({x["id"] for x in records})
    langs = Counter(x["lang"] for x in records if x["method"] == "extractive")
    lines = [
        "# Compression benchmark",
        "",
        f"`python -m scripts.bench_compression` on {n_msgs} messages of `data/compression/messages.jsonl` "
        f"({langs['en']} English, {langs['ru']} Russian, 21 to 130 words), target ratio {ratio}, "
        "llama.cpp on 1 thread (n_threads = n_threads_batch = 1), greedy decoding, one-line grammar. "
        "Tokens are o200k_base (gpt-4o-mini); similarity is the MiniLM-L6 cosine to the source; "
        "numbers and negations are pooled over all messages and normalised as `afm_local/guard.py` "
        "describes. *Raw* is the model's output as is; *guarded* is `GuardedCompressor`: the model's "
        "output when `SummaryGuard` accepts it, else the extractive compression. Acceptance is the "
        "share of messages whose output the guard accepts (for extractive: what the same guard would say "
        "of it). Latency is the median per message; guarded includes the model call, the guard and any "
        "fallback.",
        "",
        "| method | n | ratio out/in | numbers kept | negations kept | similarity (en / ru) | guard accepted | latency p50 | topic accepted | topic similarity | topic p50 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in table:
        lines.append(
            f"| {t['method']} | {t['n']} | {t['ratio']:.2f} | {t['numbers']:.0%} | {t['negations']:.0%} | "
            f"{t['similarity']:.3f} ({t['sim_en']:.2f} / {t['sim_ru']:.2f}) | {t['accepted']:.0%} | "
            f"{t['latency'] * 1000:.0f} ms | {t['topic_accepted']:.0%} | {t['topic_similarity']:.3f} | {t['topic_latency'] * 1000:.0f} ms |"
        )
    partial = [t for t in table if t["n"] < n_msgs]
    if partial:
        lines += ["", "Rows with n < " + str(n_msgs) + " ran on the first n messages only (the run stopped early), so "
                  "compare them with extractive on those messages, not with the extractive row above: "
                  + ", ".join(f"{t['method']} ({t['n']})" for t in partial) + "."]
    lines += ["", "Guard verdicts on the raw model outputs (first failed check):", "",
              "| model | " + " | ".join(["accepted", "too long", "copy of input", "dropped number", "invented number",
                                         "dropped negation", "dropped name", "low similarity", "other"]) + " |",
              "|---|" + "---:|" * 9]
    keys = ["accepted", "too long", "copy of input", "dropped number", "invented number", "dropped negation",
            "dropped name", "low similarity"]
    for t in table:
        if not t["method"].endswith(" raw"):
            continue
        c = Counter(x["reason"] for x in records if x["method"] == t["method"])
        other = sum(v for k, v in c.items() if k not in keys)
        lines.append(f"| {t['method'][:-4]} | " + " | ".join(str(c.get(k, 0)) for k in keys) + f" | {other} |")
    loads = {x["model"]: x["load_seconds"] for x in records if "model" in x}
    if loads:
        lines += ["", "Model load time: " + ", ".join(f"{k} {v:.2f} s" for k, v in loads.items()) + "."]
    best = choose_default(table)
    lines += ["", "## Examples", ""]
    for mid in ("m25", "m02"):
        src = next((x for x in records if x["id"] == mid and x["method"] == "extractive"), None)
        if src is None:
            continue
        lines.append(f"Message `{mid}`:")
        lines.append("")
        for x in records:
            if x["id"] == mid:
                lines.append(f"- **{x['method']}** ({x['reason'] if 'guarded' in x['method'] else ('accepted' if x['accepted'] else x['reason'])}): {x['text']}")
        lines.append("")
    lines += ["## Default", ""]
    lines.append(
        f"By the rule in `choose_default` (a guarded model only if it is clearly better than extractive: "
        f"similarity +0.01 or ratio -0.03, at no loss of numbers or negations and no longer output; else "
        f"extractive), the default is "
        f"**{best['method']}**: ratio {best['ratio']:.2f}, numbers {best['numbers']:.0%}, negations "
        f"{best['negations']:.0%}, similarity {best['similarity']:.3f}, latency {best['latency'] * 1000:.0f} ms."
    )
    tbest = choose_topic_default(table)
    tname = "KeyphraseTopicer" if tbest["method"] == "extractive" else tbest["method"]
    lines.append("")
    lines.append(
        f"For topic labels the highest similarity is **{tname}** ({tbest['topic_similarity']:.3f}, "
        f"{tbest['topic_accepted']:.0%} of labels guard-accepted, {tbest['topic_latency'] * 1000:.0f} ms)."
    )
    _RATIO[0] = ratio
    lines += ["", "## README paragraph", "", args.readme or readme_paragraph(table, best, tbest), ""]
    return "\n".join(lines)


def readme_paragraph(table: list[dict[str, Any]], best: dict[str, Any], tbest: dict[str, Any]) -> str:
    ex = next(t for t in table if t["method"] == "extractive")
    rows = {t["method"]: t for t in table}
    q = "qwen2.5-coder-0.5b-instruct"
    raw, g = rows.get(f"{q} raw"), rows.get(f"{q} guarded")
    n = ex["n"]
    if best["method"] == "extractive":
        lead = (f"afm-local compresses with the deterministic extractive compressor by default: on {n} English and "
                f"Russian messages at the default ratio {ratio_of(table)} it keeps {ex['numbers']:.0%} of numbers and "
                f"{ex['negations']:.0%} of negations at {ex['ratio']:.2f} of the tokens, in about 1 ms.")
    else:
        lead = (f"afm-local compresses with **{best['method']}** by default ({best['ratio']:.2f} of the tokens, "
                f"{best['numbers']:.0%} of numbers kept, similarity {best['similarity']:.3f}).")
    model = ""
    if raw and g:
        model = (f" The pinned offline model, Qwen2.5-Coder-0.5B-Instruct Q4_K_M (`afm-local models install "
                 f"install`), only ever runs behind `GuardedCompressor`: raw, it kept {raw['numbers']:.0%} of numbers "
                 f"and {raw['negations']:.0%} of negations, so every summary is checked (length, not a copy, every "
                 f"number, negation and name, MiniLM similarity) and replaced by the extractive form when it fails; "
                 f"at this ratio {g['accepted']:.0%} passed, at about {g['latency']:.0f} s a message on one thread, so "
                 f"it is worth enabling for topic labels ({'its labels score ' + format(tbest['topic_similarity'], '.2f') + ' similarity vs ' + format(ex['topic_similarity'], '.2f') + ' for key phrases' if tbest is not None and tbest['method'] != 'extractive' else 'key phrases score as well'}) "
                 f"and in a background worker, not on the request path.")
    return (
        "**Compression models.** " + lead + model +
        " A user with a network should prefer a stronger instruct GGUF: Qwen2.5-1.5B-Instruct or "
        "Qwen2.5-0.5B-Instruct (`Qwen/Qwen2.5-1.5B-Instruct-GGUF`, `Qwen/Qwen2.5-0.5B-Instruct-GGUF`, q4_k_m) or "
        "gemma-3-1b-it GGUF. Download the file and use it by path, "
        "`GuardedCompressor(LlamaCppCompressor(\"/path/to/qwen2.5-1.5b-instruct-q4_k_m.gguf\", name=\"qwen2.5-1.5b\"), "
        "ExtractiveCompressor(counter), SummaryGuard(embedder, counter))`, or pin it in `models/manifest.json` "
        "(kind `gguf`, its sha256, a `{\"local\": \"/path/to/file.gguf\"}` source), install it with "
        "`afm-local models install NAME` and build it with `LlamaCppCompressor.from_manifest(NAME)`, "
        "which checks the hash at every load. A GGUF with a chat template is prompted through it; a base model "
        "through a few-shot prompt. Keep the guard on whatever model you choose."
    )


def ratio_of(table: list[dict[str, Any]]) -> Any:
    return _RATIO[0]


_RATIO = [0.35]


def plot(records: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = summarise(records)
    short = {"qwen2.5-coder-0.5b-instruct": "qwen0.5b", "smollm2-135m-instruct": "smollm2", "gemma3-270m": "gemma3"}
    labels = []
    for t in table:
        label = t["method"].replace("guarded (fallback length)", "guard-fb")
        for long, abbrev in short.items():
            label = label.replace(long, abbrev)
        labels.append(label)
    metrics = [("ratio", "ratio out/in (lower = shorter)"), ("numbers", "numbers kept"),
               ("negations", "negations kept"), ("similarity", "similarity to source"),
               ("accepted", "guard accepted"), ("latency", "latency p50 (s)")]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    colors = ["#555555" if t["method"] == "extractive" else "#d98c3f" if t["method"].endswith("raw") else "#3f7fd9"
              for t in table]
    for ax, (key, title) in zip(axes.flat, metrics):
        vals = [t[key] for t in table]
        ax.bar(range(len(vals)), vals, color=colors)
        ax.set_xticks(range(len(vals)))
        ax.set_xticklabels(labels, fontsize=7, rotation=40, ha="right")
        ax.set_title(title)
        for i, v in enumerate(vals):
            ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    fig.suptitle("Compression: extractive (grey), model raw (orange), guarded (blue)")
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", help="manifest names of GGUF models (default: every installed one)")
    ap.add_argument("--ratio", type=float, default=0.35, help="target share of tokens (AFMConfig default 0.35)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="only the first N messages")
    ap.add_argument("--report-only", action="store_true", help="re-render docs from bench_outputs.jsonl")
    ap.add_argument("--append", action="store_true",
                    help="keep the outputs of models not in this run (recomputes extractive)")
    ap.add_argument("--readme", default="", help="replace the generated README paragraph")
    ap.add_argument("--no-write", action="store_true", help="print the tables only")
    ap.add_argument("--out", default=str(OUTPUTS), help="where the per-message outputs go (jsonl)")
    ap.add_argument("--also", nargs="*", default=[],
                    help="outputs files of other runs (e.g. another --ratio) to add as extra tables")
    ap.add_argument("--no-docs", action="store_true", help="write the outputs file but not the docs")
    ap.add_argument("--calibrate", action="store_true", help="print the guard threshold calibration figures")
    args = ap.parse_args(argv)
    if args.calibrate:
        return calibrate()
    if args.report_only:
        records = [json.loads(line) for line in Path(args.out).read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        records = run(args)
    records = derive_fallback_policy(records)
    text = render(records, args)
    for extra in args.also:
        more = derive_fallback_policy(
            [json.loads(line) for line in Path(extra).read_text(encoding="utf-8").splitlines() if line.strip()])
        head, _, _ = render(more, args).partition("\nGuard verdicts")
        table = head[head.index("| method"):]
        verdicts = render(more, args).split("Guard verdicts on the raw model outputs (first failed check):")[1]
        verdicts = verdicts.split("\n\nModel load")[0].split("\n## ")[0]
        section = (f"\n## At target ratio {more[0]['ratio']} ({Path(extra).name})\n\n" + table.strip()
                   + "\n\nGuard verdicts on the raw model outputs:\n" + verdicts.rstrip() + "\n")
        text = text.replace("\n## Examples", section + "\n## Examples", 1)
    print(text)
    if args.no_docs:
        return 0
    if not args.no_write:
        DOC.parent.mkdir(parents=True, exist_ok=True)
        DOC.write_text(text, encoding="utf-8")
        plot(records)
        print(f"wrote {DOC.relative_to(ROOT)} and {PLOT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
