"""Load test of ``afm-local serve``: concurrent appends and context builds over many sessions, on SQLite
with one process, and with ``--db postgresql://...`` also on PostgreSQL with one and with ``--processes``
worker processes, all in the same run with the same requests.

Each configuration starts its own server (``afm-local serve --workers P``) on a free 127.0.0.1 port with
a fresh store (a new SQLite file; a new database created on the given PostgreSQL server and dropped
afterwards, so the role needs CREATEDB and no existing data is touched), runs ``--requests`` requests
(appends and context builds, mixed, the same plan every time) from ``--clients`` threads over
``--sessions`` sessions, stops the server and compares the acknowledged appends with the rows in the
database. Prints markdown tables and writes them to ``--out`` (docs/benchmarks/server.md).

    python -m scripts.bench_server                                     # SQLite, 1 process
    dsn=$(python -m scripts.pgcluster start /tmp/afm-bench-pg)          # a private PostgreSQL, if needed
    python -m scripts.bench_server --db "$dsn" --processes 2          # + PostgreSQL with 1 and 2 processes
    python -m scripts.pgcluster stop /tmp/afm-bench-pg

Exit status 1 when any request failed or an acknowledged message is missing.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import secrets
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from afm_local.server.store import is_postgres_url, redact_url
from scripts.common import ROOT

THREAD_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}

SUBJECTS = ["the flight to Lisbon", "the hotel in Alfama", "my son's peanut allergy", "the Sintra day trip",
            "the budget for dinners", "the rental car", "the museum tickets", "the train from Rossio",
            "the supplier meeting", "the invoice for order 4411", "the database migration", "the release on Friday"]
VERBS = ["moved to", "must stay under", "was confirmed for", "cannot be before", "should include", "needs a check on"]
OBJECTS = ["09:40 on 14 May", "120 euros per person", "a table for four", "the window seat", "gluten-free options",
           "the second week of June", "the last train back", "two adults and two kids", "a refund by Monday"]
QUERIES = ["What time is the flight?", "What must dinner avoid?", "How do we get to Sintra?", "What is the budget?",
           "When is the supplier meeting?", "What did we decide about the release?"]


@dataclass
class Config:
    name: str
    db: str  # a SQLite path or a PostgreSQL URL (with its password: never printed)
    processes: int
    one_port: bool = False  # ``--workers N`` on one port, else N servers on their own ports


@dataclass
class Result:
    config: Config
    wall: float = 0.0
    latencies: list[tuple[str, float, int]] = field(default_factory=list)  # (kind, seconds, status)
    acked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seeded: int = 0
    stored: set[str] = field(default_factory=set)
    rows: int = 0
    integrity: str = "n/a"

    @property
    def lost(self) -> int:
        return len(set(self.acked) - self.stored)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


# ------------------------------------------------------------------------------------------ stores


def fresh_postgres_database(dsn: str) -> tuple[str, str]:
    """A new database on the server ``dsn`` names: (its URL, its name)."""
    import psycopg
    from psycopg import sql

    name = f"afm_bench_{secrets.token_hex(4)}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    server, _, rest = dsn.rpartition("/")
    _, mark, query = rest.partition("?")
    return f"{server}/{name}{mark}{query}", name


def drop_postgres_database(dsn: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def read_back(result: Result, sessions: list[str]) -> None:
    """The message ids stored for the benchmark's sessions, straight from the database."""
    db = result.config.db
    if is_postgres_url(db):
        import psycopg

        with psycopg.connect(db) as conn:
            ids = [r[0] for r in conn.execute("SELECT message_id FROM messages WHERE session_id = ANY(%s)", (sessions,))]
    else:
        with sqlite3.connect(db) as conn:
            marks = ",".join("?" * len(sessions))
            ids = [r[0] for r in conn.execute(f"SELECT message_id FROM messages WHERE session_id IN ({marks})", sessions)]
            result.integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    result.stored, result.rows = set(ids), len(ids)


# ------------------------------------------------------------------------------------------ one run


def start_server(config: Config, workers: int, workdir: Path, concurrency: int, tag: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, **THREAD_ENV, "PYTHONPATH": str(ROOT), "AFM_DB": config.db}  # the URL stays out of ps
    log_path = workdir / f"{config.name.replace(' ', '-').replace(',', '')}-{tag}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "afm_local", "serve", "--host", "127.0.0.1", "--port", str(port),
                                 "--workers", str(workers), "--concurrency", str(concurrency)],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"{config.name}: the server exited: see {log_path}")
        try:
            if httpx.get(url + "/healthz", timeout=2, trust_env=False).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{config.name}: the server did not start")
        time.sleep(0.2)


def seed(url: str, count: int) -> list[str]:
    """``count`` sessions of two messages each, so that every context build has a history to pack."""
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as c:
        sessions = [c.post("/v1/sessions").json()["id"] for _ in range(count)]
        for k, sid in enumerate(sessions):
            for j in range(2):
                c.post(f"/v1/sessions/{sid}/messages", json={"role": "user" if j == 0 else "assistant",
                                                            "content": f"Session {k} opening note {j}: plan the trip."}
                       ).raise_for_status()
    return sessions


def drive(urls: list[str], sessions: list[str], args: argparse.Namespace, result: Result) -> None:
    """``args.requests`` requests from ``args.clients`` threads, the same plan for every configuration;
    client ``n`` talks to ``urls[n % len(urls)]`` over one keep-alive connection, as behind a balancer."""
    rng = random.Random(args.seed)
    plan = iter([("append" if rng.random() < args.append_share else "context", rng.randrange(len(sessions)), i)
                 for i in range(args.requests)])
    lock = threading.Lock()

    def client(n: int) -> None:
        crng = random.Random(args.seed * 1000 + n)
        with httpx.Client(base_url=urls[n % len(urls)], timeout=120, trust_env=False) as c:
            while True:
                with lock:
                    task = next(plan, None)
                if task is None:
                    return
                kind, s, i = task
                t0 = time.perf_counter()
                try:
                    if kind == "append":
                        r = c.post(f"/v1/sessions/{sessions[s]}/messages",
                                   json={"role": crng.choice(["user", "assistant"]), "content": message_text(crng, i)})
                    else:
                        r = c.post(f"/v1/sessions/{sessions[s]}/context",
                                   json={"query": crng.choice(QUERIES), "budget_tokens": args.budget})
                    status, error = r.status_code, (None if r.is_success else f"HTTP {r.status_code} {r.text[:200]}")
                except httpx.HTTPError as exc:
                    status, error = -1, type(exc).__name__
                with lock:
                    result.latencies.append((kind, time.perf_counter() - t0, status))
                    if error:
                        result.errors.append(f"{kind}: {error}")
                    elif kind == "append":
                        result.acked.append(r.json()["id"])

    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
    t_start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.wall = time.perf_counter() - t_start


def run(config: Config, args: argparse.Namespace, workdir: Path) -> Result:
    result = Result(config)
    if config.one_port:
        servers = [start_server(config, config.processes, workdir, args.concurrency, "all")]
    else:
        servers = [start_server(config, 1, workdir, args.concurrency, str(k)) for k in range(config.processes)]
    urls = [url for _, url in servers]
    try:
        sessions = seed(urls[0], args.sessions)
        result.seeded = 2 * len(sessions)
        drive(urls, sessions, args, result)
    finally:
        for proc, _ in servers:
            proc.send_signal(signal.SIGTERM)
        for proc, _ in servers:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    read_back(result, sessions)
    print(f"{config.name}: {len(result.latencies)} requests in {result.wall:.1f} s, {len(result.errors)} errors, "
          f"{result.lost} lost", file=sys.stderr)
    return result


# ------------------------------------------------------------------------------------------ report


def throughput(result: Result) -> float:
    return len(result.latencies) / result.wall if result.wall else 0.0


def report(results: list[Result], args: argparse.Namespace, pg_url: str | None) -> str:
    summary = ["| configuration | requests | req/s | vs 1 process | p50 (ms) | p99 (ms) | errors | acknowledged | lost |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lat = [dt for _, dt, _ in r.latencies]
        single = next((x for x in results if x.config.processes == 1 and
                       is_postgres_url(x.config.db) == is_postgres_url(r.config.db)), r)
        summary.append(f"| {r.config.name} | "
                       f"{len(lat)} | {throughput(r):.1f} | {throughput(r) / throughput(single):.2f}× | "
                       f"{1000 * percentile(lat, 50):.0f} | {1000 * percentile(lat, 99):.0f} | {len(r.errors)} | "
                       f"{len(r.acked)} | **{r.lost}** |")
    details = []
    for r in results:
        details += [f"### {r.config.name}", "",
                    "| kind | requests | req/s | p50 (ms) | p95 (ms) | p99 (ms) | mean (ms) | errors |",
                    "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for kind in ("append", "context", "all"):
            lat = [dt for k, dt, _ in r.latencies if kind in ("all", k)]
            errs = sum(1 for k, _, st in r.latencies if kind in ("all", k) and st not in (200, 201))
            details.append(f"| {kind} | {len(lat)} | {len(lat) / r.wall:.1f} | {1000 * percentile(lat, 50):.1f} | "
                           f"{1000 * percentile(lat, 95):.1f} | {1000 * percentile(lat, 99):.1f} | "
                           f"{1000 * (statistics.mean(lat) if lat else float('nan')):.1f} | {errs} |")
        details += ["", f"Appends acknowledged {len(r.acked)} (plus {r.seeded} seed messages); message rows stored "
                        f"{r.rows}; lost {r.lost}; SQLite integrity_check {r.integrity}; wall {r.wall:.1f} s.", ""]
    command = f"python -m scripts.bench_server --clients {args.clients} --requests {args.requests} --sessions {args.sessions}"
    if pg_url:
        command += f" --db {redact_url(pg_url)} --processes {args.processes}"
    return "\n".join([
        "# afm-local serve: load test", "",
        f"`{command}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).", "",
        f"Machine: {os.cpu_count()} CPU cores ({platform.machine()}, {platform.system()}), Python "
        f"{platform.python_version()}. Every configuration runs the same {args.requests} requests "
        f"({args.append_share:.0%} appends, the rest context builds with a {args.budget}-token budget) from "
        f"{args.clients} client threads over {args.sessions} sessions, against a fresh store; the clients run on "
        f"the same machine and share its cores. Each server process has --concurrency {args.concurrency} and one "
        f"thread per native library; SQLite runs WAL + synchronous=NORMAL, PostgreSQL (a local server) "
        f"flushes every acknowledged commit (synchronous_commit=on). \"N processes\" are N servers on their own "
        f"ports with the clients spread evenly over them, as a load balancer would; \"--workers N\" is one server "
        f"whose N worker processes share one port, where the kernel hands each new connection to one of them. "
        f"Lost = acknowledged appends missing from the database afterwards.", "",
        *summary, "", *details,
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="a postgresql:// URL: also run PostgreSQL with 1 and --processes processes "
                                 "(fresh databases are created on that server and dropped)")
    ap.add_argument("--processes", type=int, default=2, help="worker processes of the PostgreSQL run (default 2)")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--append-share", type=float, default=0.6)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=2, help="each server process's --concurrency")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "server.md")
    args = ap.parse_args()
    if args.db and not is_postgres_url(args.db):
        ap.error("--db takes a postgresql:// URL (SQLite always runs, on a fresh temporary file)")

    workdir = Path(tempfile.mkdtemp(prefix="afm-bench-"))
    results = [run(Config("SQLite, 1 process", str(workdir / "bench.db"), 1), args, workdir)]
    runs: list[tuple[str, int, bool]] = []  # (name, processes, on one port)
    if args.db:
        runs.append(("PostgreSQL, 1 process", 1, False))
        if args.processes > 1:
            runs += [(f"PostgreSQL, {args.processes} processes", args.processes, False),
                     (f"PostgreSQL, --workers {args.processes}", args.processes, True)]
    for name, processes, one_port in runs:
        url, database = fresh_postgres_database(args.db)
        try:
            results.append(run(Config(name, url, processes, one_port), args, workdir))
        finally:
            drop_postgres_database(args.db, database)
    text = report(results, args, args.db)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    failed = any(r.errors or r.lost or r.rows != len(r.acked) + r.seeded or r.integrity not in ("ok", "n/a")
                 for r in results)
    for r in results:
        if r.errors:
            print(f"{r.config.name}: first errors:", *r.errors[:5], sep="\n  ", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
