"""Load test of ``afm-local serve``: concurrent appends and context builds over many sessions.

Starts the server as a subprocess on a free 127.0.0.1 port with a fresh SQLite file, runs
``--requests`` requests (appends and context builds, mixed) from ``--clients`` threads over
``--sessions`` sessions, then stops the server and compares the acknowledged appends with the rows
in the database. Prints a markdown table and writes it to ``--out`` (docs/benchmarks/server.md).

    python -m scripts.bench_server                       # 16 clients, 2,000 requests, 50 sessions
    python -m scripts.bench_server --requests 200 --out /tmp/x.md

Exit status 1 when any request failed or an acknowledged message is missing.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from scripts.common import ROOT

import httpx

THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}

SUBJECTS = ["the flight to Lisbon", "the hotel in Alfama", "my son's peanut allergy", "the Sintra day trip",
            "the budget for dinners", "the rental car", "the museum tickets", "the train from Rossio",
            "the supplier meeting", "the invoice for order 4411", "the database migration", "the release on Friday"]
VERBS = ["moved to", "must stay under", "was confirmed for", "cannot be before", "should include", "needs a check on"]
OBJECTS = ["09:40 on 14 May", "120 euros per person", "a table for four", "the window seat", "gluten-free options",
           "the second week of June", "the last train back", "two adults and two kids", "a refund by Monday"]
QUERIES = ["What time is the flight?", "What must dinner avoid?", "How do we get to Sintra?", "What is the budget?",
           "When is the supplier meeting?", "What did we decide about the release?"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def message_text(rng: random.Random, i: int) -> str:
    text = f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
    if rng.random() < 0.1:
        return "[!] " + text + ", no exceptions."
    if rng.random() < 0.3:
        return text + "."  # repeated texts: served from the artifact cache
    return f"{text} (note {i}, {rng.choice(['ok', 'thanks', 'noted', 'please double-check'])})."


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--append-share", type=float, default=0.6)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--workers", type=int, default=2, help="server's model-work pool")
    ap.add_argument("--time-limit", type=float, default=900.0, help="stop issuing requests after this many seconds")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "server.md")
    args = ap.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="afm-bench-"))
    db = workdir / "bench.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **THREAD_ENV, "PYTHONPATH": str(ROOT)}
    log = (workdir / "server.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "afm_local", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--db", str(db), "--workers", str(args.workers)], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"server exited: {(workdir / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(url + "/healthz", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("server did not start")
            time.sleep(0.2)

        with httpx.Client(base_url=url, timeout=60, trust_env=False) as c:
            sessions = [c.post("/v1/sessions").json()["id"] for _ in range(args.sessions)]
            # Two messages per session first, so every context build has a history to pack.
            for k, sid in enumerate(sessions):
                for j in range(2):
                    r = c.post(f"/v1/sessions/{sid}/messages", json={"role": "user" if j == 0 else "assistant",
                                                                    "content": f"Session {k} opening note {j}: plan the trip."})
                    r.raise_for_status()
        seeded = 2 * len(sessions)

        rng = random.Random(args.seed)
        plan = [("append" if rng.random() < args.append_share else "context", rng.randrange(len(sessions)), i)
                for i in range(args.requests)]
        lock = threading.Lock()
        cursor = iter(plan)
        results: list[tuple[str, float, int]] = []
        acked: list[str] = []
        errors: list[str] = []
        stop_at = time.monotonic() + args.time_limit

        def client(n: int) -> None:
            crng = random.Random(args.seed * 1000 + n)
            with httpx.Client(base_url=url, timeout=120, trust_env=False) as c:
                while time.monotonic() < stop_at:
                    with lock:
                        task = next(cursor, None)
                    if task is None:
                        return
                    kind, s, i = task
                    sid = sessions[s]
                    t0 = time.perf_counter()
                    try:
                        if kind == "append":
                            r = c.post(f"/v1/sessions/{sid}/messages",
                                       json={"role": crng.choice(["user", "assistant"]), "content": message_text(crng, i)})
                            ok = r.status_code == 201
                        else:
                            r = c.post(f"/v1/sessions/{sid}/context",
                                       json={"query": crng.choice(QUERIES), "budget_tokens": args.budget})
                            ok = r.status_code == 200
                        status = r.status_code
                    except httpx.HTTPError as exc:
                        ok, status = False, -1
                        r = None
                        with lock:
                            errors.append(f"{kind}: {type(exc).__name__}")
                    dt = time.perf_counter() - t0
                    with lock:
                        results.append((kind, dt, status))
                        if ok and kind == "append":
                            acked.append(r.json()["id"])  # type: ignore[union-attr]
                        elif not ok and r is not None:
                            errors.append(f"{kind}: HTTP {status} {r.text[:200]}")

        t_start = time.perf_counter()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t_start

        metrics = httpx.get(url + "/metrics", timeout=30, trust_env=False).text
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()

    conn = sqlite3.connect(db)
    stored = {row[0] for row in conn.execute("SELECT message_id FROM messages")}
    total_rows = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    conn.close()
    lost = len(set(acked) - stored)

    def metric(name: str, cache: str) -> float:
        for line in metrics.splitlines():
            if line.startswith(f'{name}{{cache="{cache}"}}'):
                return float(line.split()[-1])
        return 0.0

    done = len(results)
    rows = []
    for kind in ("append", "context", "all"):
        lat = [dt for k, dt, _ in results if kind == "all" or k == kind]
        errs = sum(1 for k, _, st in results if (kind == "all" or k == kind) and st not in (200, 201))
        rows.append(f"| {kind} | {len(lat)} | {len(lat) / wall:.1f} | {1000 * percentile(lat, 50):.1f} | "
                    f"{1000 * percentile(lat, 95):.1f} | {1000 * percentile(lat, 99):.1f} | "
                    f"{1000 * (statistics.mean(lat) if lat else float('nan')):.1f} | {errs} |")
    hits, misses = metric("afm_cache_hits_total", "session"), metric("afm_cache_misses_total", "session")
    report = "\n".join([
        "# afm-local serve: load test",
        "",
        f"`python -m scripts.bench_server --clients {args.clients} --requests {args.requests} --sessions {args.sessions}` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).",
        "",
        f"Machine: {os.cpu_count()} CPU cores ({platform.machine()}, {platform.system()}), Python "
        f"{platform.python_version()}; server on 127.0.0.1 with {args.workers} model workers, 1 thread per native "
        f"library, SQLite WAL + synchronous=NORMAL. Clients run on the same machine (they share the cores). "
        f"Appends run the embedder and the classifier; context builds embed the query and pack (budget "
        f"{args.budget} tokens).",
        "",
        f"{done} of {args.requests} requests in {wall:.1f} s from {args.clients} concurrent clients over "
        f"{args.sessions} sessions ({args.append_share:.0%} appends).",
        "",
        "| kind | requests | throughput (req/s) | p50 (ms) | p95 (ms) | p99 (ms) | mean (ms) | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "| durability | value |",
        "|---|---:|",
        f"| appends acknowledged (plus {seeded} seed messages) | {len(acked)} |",
        f"| message rows in SQLite afterwards | {total_rows} |",
        f"| **messages lost** (acknowledged but not in SQLite) | **{lost}** |",
        f"| PRAGMA integrity_check | {integrity} |",
        f"| artifact cache hits / misses (session cache) | {hits:.0f} / {misses:.0f} |",
        f"| transport errors and non-2xx | {len(errors)} |",
        "",
    ])
    print(report)
    if errors:
        print("first errors:", *errors[:5], sep="\n  ", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report, encoding="utf-8")
    incomplete = done < args.requests
    if incomplete:
        print(f"time limit reached: {done} of {args.requests} requests", file=sys.stderr)
    return 1 if errors or lost or integrity != "ok" or total_rows != len(acked) + seeded else 0


if __name__ == "__main__":
    raise SystemExit(main())
