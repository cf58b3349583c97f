"""Speed of the engine on one thread: ingest, a turn with a new query at 100 / 1,000 / 5,000 messages,
and a cold `afm-local pack`, beside a baseline revision measured in the same run.

    .venv/bin/python -m scripts.bench_speed [--baseline 0fb8d4f] [--sizes 100,1000,5000] [--queries 20]
        [--rounds 2] [--ingest 150]

Each measurement runs in a child process (its peak RSS is its own) that imports afm_local from the
revision under test: this checkout, or ``--baseline`` unpacked with ``git archive`` (its committed
models, plus this checkout's installed vocabulary and embedder files). Rounds alternate the two, so
both see the same noisy machine; figures are medians, and the ratio is to the baseline in the same
run. Every turn asks a query the history has not seen, so its embedding is part of the cost; the
query embedding alone is timed too, to show what the build costs beyond it. Only public API is used
(``FocusManager``, ``local_components``, ``AFMConfig``), so any revision can be measured.
Writes docs/benchmarks/speed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from scripts.common import OUT_DIR, ROOT

TOPICS = ["hotel", "train", "museum", "budget", "visa", "restaurant", "beach", "flight", "weather", "market"]
CITIES = ["Bangkok", "Chiang Mai", "Krabi", "Hanoi", "Tokyo", "Lisbon", "Tbilisi", "Kazan"]
CONSTRAINTS = [
    "I have a severe peanut allergy, no peanuts at all.",
    "Our budget is strictly no more than 300,000 rubles.",
    "I take warfarin, so no grapefruit and no NSAIDs.",
]
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "AFM_THREADS")}


def history(n: int, seed: int = 7) -> list[dict[str, str]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        if i % 97 == 3:
            rows.append({"role": "user", "content": rng.choice(CONSTRAINTS)})
            continue
        topic, city = rng.choice(TOPICS), rng.choice(CITIES)
        rows.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": (
                    f"Message {i}: about the {topic} in {city}. We compared {rng.randint(2, 9)} options, "
                    f"prices from {rng.randint(10, 500)} to {rng.randint(500, 2000)} and opening times. "
                    f"The {topic} near the old town looked best, though reviews mention crowds on weekends."
                ),
            }
        )
    return rows


def measure(sizes: list[int], queries: int, ingest: int) -> dict:
    """In the child: the figures of the afm_local on sys.path."""
    from afm_local import AFMConfig, FocusManager, local_components

    t = time.perf_counter()
    comps = local_components(AFMConfig(), threads=1)
    load = time.perf_counter() - t
    rows = history(max(sizes))
    fm = FocusManager(AFMConfig(), components=comps)
    one = []
    for row in rows[:ingest]:  # one at a time, cold cache: embed + classify + compress + count
        t = time.perf_counter()
        fm.add_message(row["role"], row["content"])
        one.append(time.perf_counter() - t)
    out: dict = {"load_s": load, "ingest_ms": 1000 * statistics.median(one), "turn_ms": {}, "embed_ms": {}}
    done = ingest
    for size in sorted(sizes):
        t = time.perf_counter()
        fm.add_messages(rows[done:size])
        if size > done:
            out.setdefault("batch_ingest_ms", 1000 * (time.perf_counter() - t) / (size - done))
        done = size
        turn, embed = [], []
        for k in range(queries):
            query = f"Question {size}-{k}: which {TOPICS[k % 10]} in {CITIES[k % 8]} did we like, and why?"
            t = time.perf_counter()
            fm.build_context(query, 2000)
            turn.append(time.perf_counter() - t)
            t = time.perf_counter()
            comps.embedder.embed([query + " (again)"])
            embed.append(time.perf_counter() - t)
        out["turn_ms"][size] = 1000 * statistics.median(turn)
        out["embed_ms"][size] = 1000 * statistics.median(embed)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def child(root: Path, models: Path, args: argparse.Namespace) -> dict:
    code = (
        f"import sys, json, importlib.util; sys.path.insert(0, {str(root)!r})\n"
        f"spec = importlib.util.spec_from_file_location('bench_speed', {str(Path(__file__))!r})\n"
        "bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)\n"
        "import afm_local; assert afm_local.__file__.startswith(sys.path[0]), afm_local.__file__\n"
        f"print(json.dumps(bench.measure({args.sizes!r}, {args.queries}, {args.ingest})))"
    )
    env = {**os.environ, **THREADS, "AFM_MODELS_DIR": str(models), "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"measuring {root} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cold_pack(root: Path, models: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a fresh `afm-local pack` of the bundled example."""
    env = {**os.environ, **THREADS, "AFM_MODELS_DIR": str(models), "PYTHONPATH": str(root)}
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "afm_local", "pack", str(ROOT / "examples" / "peanut_trip.json"), "--budget", "500"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status:
        raise SystemExit(f"cold pack in {root} failed: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    return wall, usage.ru_maxrss / 1024


def baseline_tree(rev: str, into: Path) -> tuple[Path, Path]:
    """The revision's files (git archive), and a models folder: its committed models, this checkout's
    installed vocabulary and embedder files (content-addressed by the manifest, so the same files)."""
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    root = into / "baseline"
    root.mkdir()
    with tempfile.TemporaryFile() as fh:
        fh.write(archive)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(root, filter="data")
    for name in ("tiktoken", "embedder", "multilingual-e5-small", "gguf"):
        src = ROOT / "models" / name
        if src.is_dir() and not (root / "models" / name).exists():
            shutil.copytree(src, root / "models" / name, symlinks=True)
    return root, root / "models"


def median_of(runs: list[dict], key: str, size: int | None = None) -> float:
    values = [r[key][str(size)] if size is not None else r[key] for r in runs]
    return statistics.median(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", default="0fb8d4f", help="revision to compare with ('' for none)")
    ap.add_argument("--sizes", default="100,1000,5000")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--ingest", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT_DIR / "speed.md")
    args = ap.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this": (ROOT, ROOT / "models")}
        if args.baseline:
            trees["baseline"] = baseline_tree(args.baseline, Path(tmp))
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for r in range(args.rounds):
            for name in list(trees) if r % 2 == 0 else list(reversed(trees)):
                root, models = trees[name]
                result = json.loads(json.dumps(child(root, models, args)))  # sizes as string keys
                result["cold_s"], result["cold_rss_mb"] = cold_pack(root, models)
                runs[name].append(result)
                print(f"round {r + 1} {name}: {json.dumps(result)}", flush=True)
    lines = report(runs, args)
    print("\n".join(lines))
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def report(runs: dict[str, list[dict]], args: argparse.Namespace) -> list[str]:
    from scripts.common import isa  # here, not at the top: a baseline's child process imports this module

    has_base = "baseline" in runs

    def cell(key: str, size: int | None = None, fmt: str = "{:.1f}") -> str:
        value = median_of(runs["this"], key, size)
        text = fmt.format(value)
        if has_base:
            text += f" (×{value / median_of(runs['baseline'], key, size):.2f})"
        return text

    lines = [
        f"# Engine speed (1 thread, medians of {args.rounds} rounds"
        + (f", ratios to {args.baseline} in the same run)" if has_base else ")"),
        "",
        "Command: `.venv/bin/python -m scripts.bench_speed"
        + (f" --baseline {args.baseline}" if has_base else "")
        + f" --sizes {','.join(map(str, args.sizes))} --queries {args.queries} --rounds {args.rounds}`. "
        "Every turn asks a "
        f"new query (its embedding included); *build beyond the query* is the turn minus the query embedding alone. "
        f"Ran on {isa()}.",
        "",
        "| measure | this checkout"
        + (f" (× {args.baseline})" if has_base else "")
        + (f" | {args.baseline}" if has_base else "")
        + " |",
        "|---|---:|" + ("---:|" if has_base else ""),
    ]

    def row(label: str, key: str, size: int | None = None, fmt: str = "{:.1f}") -> str:
        base = f" | {fmt.format(median_of(runs['baseline'], key, size))}" if has_base else ""
        return f"| {label} | {cell(key, size, fmt)}{base} |"

    lines.append(row("ingest one message, cold cache (ms)", "ingest_ms"))
    lines.append(row("ingest in a batch, per message (ms)", "batch_ingest_ms"))
    for size in args.sizes:
        lines.append(row(f"turn at {size:,} messages, new query (ms)", "turn_ms", size))
        lines.append(row("  query embedding alone (ms)", "embed_ms", size))
    for size in args.sizes:
        beyond = [r["turn_ms"][str(size)] - r["embed_ms"][str(size)] for r in runs["this"]]
        text = f"{statistics.median(beyond):.1f}"
        if has_base:
            base = [r["turn_ms"][str(size)] - r["embed_ms"][str(size)] for r in runs["baseline"]]
            text += f" | {statistics.median(base):.1f}"
        lines.append(f"| build beyond the query at {size:,} messages (ms) | {text} |")
    lines.append(row("components load (s)", "load_s", None, "{:.2f}"))
    lines.append(row("cold `afm-local pack` of examples/peanut_trip.json (s)", "cold_s", None, "{:.2f}"))
    lines.append(row("peak RSS of that pack (MB)", "cold_rss_mb", None, "{:.0f}"))
    lines.append(row(f"peak RSS of the {max(args.sizes):,}-message run (MB)", "peak_rss_mb", None, "{:.0f}"))
    return lines + [""]


if __name__ == "__main__":
    main()
