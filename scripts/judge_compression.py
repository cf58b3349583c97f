"""Two-judge evaluation of the compressed forms of the real test messages.

    python -m scripts.judge_compression packet [--dir ../comp_judging] [--model NAME --model-cache PATH]
    python -m scripts.judge_compression import CODE CODE [--dir ../comp_judging]
    python -m scripts.judge_compression report

``packet`` writes, outside the repository (the items hold third-party text), ``items.jsonl`` with every
test message that gets a real compressed form (shorter than the message) from the extractive compressor
and, with ``--model``, every summary of that GGUF model that the guard accepts, in a shuffled order that
hides the method, plus ``tool.py`` and ``GUIDE.md`` from ``scripts/judging/``. Judges record three yes/no
verdicts per item with ``tool.py`` (faithful, grammatical, keeps what a later question would need) into
``judgements_<CODE>.jsonl``. ``import`` keeps their verdicts per id, method and form hash, never the text,
in ``data/compression/real_judgements.jsonl``; ``report`` and ``scripts/bench_compression.py`` print
per judgement each judge's rate, agreement, Cohen's kappa and the share both call yes.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

from afm_local.local.tokens import TiktokenCounter
from afm_local.text.extractive import ExtractiveCompressor
from scripts.common import ROOT, CachedModel, form_sha, judged_figures, load_jsonl
from scripts.corpora import turn

REAL = ROOT / "data" / "compression" / "real_messages.jsonl"
JUDGEMENTS = ROOT / "data" / "compression" / "real_judgements.jsonl"
TOOLS = ROOT / "scripts" / "judging"
DEFAULT_DIR = ROOT.parent / "comp_judging"
RATIO = 0.35
SEED = 17


def forms(model: str | None, cache: Path | None) -> list[dict]:
    """The test messages' real compressed forms: extractive, and the guard-accepted summaries of ``model``
    (read from the benchmark's model cache when it holds them, else made by the model)."""
    counter = TiktokenCounter()
    extractive = ExtractiveCompressor(counter)
    guarded = None
    if model:
        from afm_local.local.embedding import OnnxEmbedder
        from afm_local.text.checks import SummaryGuard
        from afm_local.text.guarded import GuardedCompressor

        guard = SummaryGuard(OnnxEmbedder(threads=1), counter)
        guarded = GuardedCompressor(CachedModel(model, 1, cache), extractive, guard)
    out = []
    for row in (r for r in load_jsonl(REAL) if r["split"] == "test"):
        source = turn(row["id"]).text
        candidates = [("extractive", extractive.compress(source, RATIO).text)]
        if guarded is not None:
            result = guarded.compress(source, RATIO)
            if result.method.startswith("llama:"):
                candidates.append((f"{model} guarded", result.text))  # the benchmark's name for the method
        for method, text in candidates:
            if counter.count(text) < counter.count(source):
                out.append(
                    dict(id=row["id"], lang=row["lang"], method=method, source=source, form=text, sha=form_sha(text))
                )
    return out


def packet(folder: Path, model: str | None, cache: Path | None) -> None:
    folder = folder.resolve()
    if ROOT in folder.parents or folder == ROOT:
        raise SystemExit("the packet holds third-party text: write it outside the repository")
    items = forms(model, cache)
    random.Random(SEED).shuffle(items)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "items.jsonl").open("w", encoding="utf-8") as fh:
        for number, item in enumerate(items, 1):
            fh.write(json.dumps({"item": number, **item}, ensure_ascii=False) + "\n")
    for name in ("tool.py", "GUIDE.md"):
        shutil.copy(TOOLS / name, folder / name)
    methods = {m: sum(i["method"] == m for i in items) for m in sorted({i["method"] for i in items})}
    print(f"{len(items)} items {methods} -> {folder}")


def import_judgements(folder: Path, codes: list[str]) -> None:
    """Each judge's verdicts per item, kept as a three-letter code per judge (``fgk``, ``-`` for no)."""
    items = {i["item"]: i for i in load_jsonl(folder / "items.jsonl")}
    merged: dict[tuple[str, str], dict] = {}
    for code in codes:
        for j in load_jsonl(folder / f"judgements_{code}.jsonl"):
            item = items[j["item"]]
            if (item["id"], item["method"], item["sha"]) != (j["id"], j["method"], j["sha"]):
                raise SystemExit(f"judge {code}, item {j['item']}: does not match items.jsonl")
            key = (item["id"], item["method"])
            row = merged.setdefault(key, {"id": item["id"], "method": item["method"], "sha": item["sha"], "judges": {}})
            row["judges"][code] = "".join(mark if j[mark] else "-" for mark in "fgk")
    rows = sorted(merged.values(), key=lambda r: (r["id"], r["method"]))
    JUDGEMENTS.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    complete = sum(len(r["judges"]) == len(codes) for r in rows)
    print(f"{len(rows)} forms, {complete} judged by all of {', '.join(codes)} -> {JUDGEMENTS.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("packet", help="write items, tool and guide for the judges")
    p.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    p.add_argument("--model", default=None, help="also judge this GGUF model's guard-accepted summaries")
    p.add_argument("--model-cache", type=Path, default=None, help="the benchmark's cache of the model's outputs")
    i = sub.add_parser("import", help="read judgements_<CODE>.jsonl into data/compression/real_judgements.jsonl")
    i.add_argument("codes", nargs="+")
    i.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    sub.add_parser("report", help="print the judged figures")
    args = ap.parse_args(argv)
    if args.command == "packet":
        packet(args.dir, args.model, args.model_cache)
    elif args.command == "import":
        import_judgements(args.dir, args.codes)
    else:
        print("\n".join(judged_figures(load_jsonl(JUDGEMENTS))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
