"""Speed of the engine on one thread: ingesting a message and building a context.

Targets (issue: the engine): ``build_context`` on a 1,000-message history with warm caches under
20 ms (median), and ingesting one message (embed + classify + compress + count) under 30 ms.
Machines here are shared and noisy, so figures are medians of one run.

    .venv/bin/python -m scripts.bench_speed [--messages 1000] [--repeats 30]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from afm_local import AFMConfig, ArtifactCache, FocusManager, local_components

TOPICS = ["hotel", "train", "museum", "budget", "visa", "restaurant", "beach", "flight", "weather", "market"]
CITIES = ["Bangkok", "Chiang Mai", "Krabi", "Hanoi", "Tokyo", "Lisbon", "Tbilisi", "Kazan"]
CONSTRAINTS = [
    "I have a severe peanut allergy, no peanuts at all.",
    "Our budget is strictly no more than 300,000 rubles.",
    "I take warfarin, so no grapefruit and no NSAIDs.",
]


def synthetic_history(n: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        if i % 97 == 3:
            rows.append({"role": "user", "content": rng.choice(CONSTRAINTS)})
            continue
        topic, city = rng.choice(TOPICS), rng.choice(CITIES)
        rows.append({
            "role": "user" if i % 2 == 0 else "assistant",
            "content": (
                f"Message {i}: about the {topic} in {city}. We compared {rng.randint(2, 9)} options, "
                f"prices from {rng.randint(10, 500)} to {rng.randint(500, 2000)} and opening times. "
                f"The {topic} near the old town looked best, though reviews mention crowds on weekends."
            ),
        })
    return rows


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--ingest", type=int, default=100, help="messages timed one by one on a cold cache")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/speed.md"))
    args = parser.parse_args()

    t0 = time.perf_counter()
    comps = local_components(threads=1)
    load_s = time.perf_counter() - t0
    history = synthetic_history(args.messages, seed=7)

    # Ingest, one message at a time, cold cache: embed + classify + compress + topic + count.
    fm = FocusManager(AFMConfig(), components=comps, cache=ArtifactCache())
    ingest = []
    for row in history[: args.ingest]:
        t = time.perf_counter()
        fm.add_message(row["role"], row["content"])
        ingest.append(time.perf_counter() - t)

    # Batch ingest of the rest (what a restore or the stateless endpoint does).
    t = time.perf_counter()
    fm.add_messages(history[args.ingest:])
    batch_per_msg = (time.perf_counter() - t) / max(1, len(history) - args.ingest)

    rows = []
    for render in ("chat", "structured"):
        for budget in (500, 2000, 8000):
            query = f"What did we decide about the hotel in Bangkok? ({render} {budget})"
            fm.build_context(query, budget, render=render)  # warm: the query embedding is now cached
            samples = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                fm.build_context(query, budget, render=render)
                samples.append(time.perf_counter() - t)
            cold_query = []
            for k in range(5):
                t = time.perf_counter()
                fm.build_context(f"A new question number {k} about {render} trains", budget, render=render)
                cold_query.append(time.perf_counter() - t)
            rows.append((render, budget, median_ms(samples), median_ms(cold_query)))

    lines = [
        f"# Engine speed ({args.messages} messages, 1 thread, classifier `{comps.classifier.name}`)",
        "",
        f"Components load: {load_s:.2f} s.",
        "",
        "| step | median | target |",
        "|---|---:|---:|",
        f"| ingest one message (embed + classify + compress + count), cold cache | {median_ms(ingest):.1f} ms | < 30 ms |",
        f"| ingest in a batch, per message | {batch_per_msg * 1000:.1f} ms | |",
        "",
        "| render | budget | build_context, warm caches | with a new query (one embedding) | target |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {r} | {b} | {warm:.1f} ms | {cold:.1f} ms | < 20 ms |" for r, b, warm, cold in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
