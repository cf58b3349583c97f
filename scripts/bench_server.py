"""Load test of ``afm-local serve``: concurrent appends and context builds over many sessions, on SQLite
with one process (plain, and encrypted with SQLCipher when the encryption extra is installed), and with
``--db postgresql://...`` also on PostgreSQL with one and with ``--processes``
worker processes, all in the same run with the same requests.

Each configuration starts its own server (``afm-local serve --workers P``) on a free 127.0.0.1 port with
a fresh store (a new SQLite file; a new database created on the given PostgreSQL server and dropped
afterwards, so the role needs CREATEDB and no existing data is touched), runs ``--requests`` requests
(appends and context builds, mixed, the same plan every time) from ``--clients`` threads over
``--sessions`` sessions, stops the server and compares the acknowledged appends with the rows in the
database. Prints markdown tables and writes them to ``--out`` (docs/benchmarks/server.md).

    python -m scripts.bench_server                                     # SQLite, 1 process, plain and encrypted
    dsn=$(python -m scripts.pgcluster start /tmp/afm-bench-pg)          # a private PostgreSQL, if needed
    python -m scripts.bench_server --db "$dsn" --processes 2          # + PostgreSQL: 1, 2 processes, --workers 2
    python -m scripts.pgcluster stop /tmp/afm-bench-pg

Exit status 1 when any request failed or an acknowledged message is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import random
import secrets
import shutil
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
from typing import Any

import httpx

from afm_local.server.store import is_postgres_url, redact_url
from scripts.common import ROOT

ENCRYPTED = "SQLite encrypted (SQLCipher), 1 process"
DB_KEY = secrets.token_hex(16)  # the encrypted runs' passphrase (SQLCipher derives the key from it)
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}

SUBJECTS = [
    "the flight to Lisbon",
    "the hotel in Alfama",
    "my son's peanut allergy",
    "the Sintra day trip",
    "the budget for dinners",
    "the rental car",
    "the museum tickets",
    "the train from Rossio",
    "the supplier meeting",
    "the invoice for order 4411",
    "the database migration",
    "the release on Friday",
]
VERBS = ["moved to", "must stay under", "was confirmed for", "cannot be before", "should include", "needs a check on"]
OBJECTS = [
    "09:40 on 14 May",
    "120 euros per person",
    "a table for four",
    "the window seat",
    "gluten-free options",
    "the second week of June",
    "the last train back",
    "two adults and two kids",
    "a refund by Monday",
]
QUERIES = [
    "What time is the flight?",
    "What must dinner avoid?",
    "How do we get to Sintra?",
    "What is the budget?",
    "When is the supplier meeting?",
    "What did we decide about the release?",
]


@dataclass
class Config:
    name: str
    db: str  # a SQLite path or a PostgreSQL URL (with its password: never printed)
    processes: int
    one_port: bool = False  # ``--workers N`` on one port, else N servers on their own ports
    encrypted: bool = False  # SQLite through SQLCipher (--db-key-env)


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
    server_cpu: float = 0.0  # CPU seconds the server processes spent during the requests

    @property
    def lost(self) -> int:
        return len(set(self.acked) - self.stored)


def process_tree_cpu(pids: list[int]) -> float:
    """User + system CPU seconds of these processes and all their descendants (Linux /proc)."""
    total, todo = 0.0, list(pids)
    while todo:
        pid = todo.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            todo += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


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
            ids = [
                r[0] for r in conn.execute("SELECT message_id FROM messages WHERE session_id = ANY(%s)", (sessions,))
            ]
    else:
        driver: Any = sqlite3
        if result.config.encrypted:
            from sqlcipher3 import dbapi2 as driver
        with driver.connect(db) as conn:
            if result.config.encrypted:
                conn.execute(f"PRAGMA key = '{DB_KEY}'")
            marks = ",".join("?" * len(sessions))
            ids = [
                r[0] for r in conn.execute(f"SELECT message_id FROM messages WHERE session_id IN ({marks})", sessions)
            ]
            result.integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    result.stored, result.rows = set(ids), len(ids)


# ------------------------------------------------------------------------------------------ one run


def start_server(
    config: Config, workers: int, workdir: Path, concurrency: int, tag: str
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        **THREAD_ENV,
        "PYTHONPATH": str(ROOT),
        "AFM_DB": config.db,  # the URL stays out of ps
        "AFM_BENCH_DB_KEY": DB_KEY,
    }
    extra = ["--db-key-env", "AFM_BENCH_DB_KEY"] if config.encrypted else []
    log_path = workdir / f"{config.name.replace(' ', '-').replace(',', '')}-{tag}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "afm_local",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--concurrency",
                str(concurrency),
                "--rate-limit",
                "0",
                *extra,
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
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
                c.post(
                    f"/v1/sessions/{sid}/messages",
                    json={
                        "role": "user" if j == 0 else "assistant",
                        "content": f"Session {k} opening note {j}: plan the trip.",
                    },
                ).raise_for_status()
    return sessions


def drive(urls: list[str], sessions: list[str], args: argparse.Namespace, result: Result) -> None:
    """``args.requests`` requests from ``args.clients`` threads, the same plan for every configuration.
    A request for session ``s`` goes to ``urls[s % len(urls)]``, as a balancer that hashes the session id
    would send it (each client keeps one connection per server)."""
    rng = random.Random(args.seed)
    plan = iter(
        [
            ("append" if rng.random() < args.append_share else "context", rng.randrange(len(sessions)), i)
            for i in range(args.requests)
        ]
    )
    lock = threading.Lock()

    def client(n: int) -> None:
        crng = random.Random(args.seed * 1000 + n)
        connections = [httpx.Client(base_url=url, timeout=120, trust_env=False) for url in urls]
        try:
            while True:
                with lock:
                    task = next(plan, None)
                if task is None:
                    return
                kind, s, i = task
                c, t0 = connections[s % len(urls)], time.perf_counter()
                try:
                    if kind == "append":
                        r = c.post(
                            f"/v1/sessions/{sessions[s]}/messages",
                            json={"role": crng.choice(["user", "assistant"]), "content": message_text(crng, i)},
                        )
                    else:
                        r = c.post(
                            f"/v1/sessions/{sessions[s]}/context",
                            json={"query": crng.choice(QUERIES), "budget_tokens": args.budget},
                        )
                    status, error = r.status_code, (None if r.is_success else f"HTTP {r.status_code} {r.text[:200]}")
                except httpx.HTTPError as exc:
                    status, error = -1, type(exc).__name__
                with lock:
                    result.latencies.append((kind, time.perf_counter() - t0, status))
                    if error:
                        result.errors.append(f"{kind}: {error}")
                    elif kind == "append":
                        result.acked.append(r.json()["id"])
        finally:
            for c in connections:
                c.close()

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
        pids = [proc.pid for proc, _ in servers]
        cpu = process_tree_cpu(pids)
        drive(urls, sessions, args, result)
        result.server_cpu = process_tree_cpu(pids) - cpu
    finally:
        for proc, _ in servers:
            proc.send_signal(signal.SIGTERM)
        for proc, _ in servers:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    read_back(result, sessions)
    print(
        f"{config.name}: {len(result.latencies)} requests in {result.wall:.1f} s, {len(result.errors)} errors, "
        f"{result.lost} lost",
        file=sys.stderr,
    )
    return result


# ------------------------------------------------------------------------------------------ report


def throughput(result: Result) -> float:
    return len(result.latencies) / result.wall if result.wall else 0.0


def summary_rows(groups: dict[str, list[Result]]) -> list[str]:
    """One row per configuration: medians over its runs; the ratio is against one process on the same store."""
    rows = [
        "| configuration | req/s (median) | req/s per run | vs 1 process | p50 (ms) | p99 (ms) | server CPU per "
        "request (ms) | server cores busy | errors | acknowledged | lost |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, runs in groups.items():
        single = groups["PostgreSQL, 1 process" if name.startswith("PostgreSQL") else "SQLite, 1 process"]
        rate = statistics.median(throughput(r) for r in runs)
        p50 = statistics.median(percentile([dt for _, dt, _ in r.latencies], 50) for r in runs)
        p99 = statistics.median(percentile([dt for _, dt, _ in r.latencies], 99) for r in runs)
        cpu = statistics.median(r.server_cpu / max(1, len(r.latencies)) for r in runs)
        busy = statistics.median(r.server_cpu / r.wall for r in runs)
        rows.append(
            f"| {name} | {rate:.1f} | {' · '.join(f'{throughput(r):.1f}' for r in runs)} | "
            f"{rate / statistics.median(throughput(r) for r in single):.2f}× | {1000 * p50:.0f} | "
            f"{1000 * p99:.0f} | {1000 * cpu:.1f} | {busy:.2f} | {sum(len(r.errors) for r in runs)} | "
            f"{sum(len(r.acked) for r in runs)} | **{sum(r.lost for r in runs)}** |"
        )
    return rows


def detail_rows(name: str, runs: list[Result]) -> list[str]:
    """Latencies by request kind, all runs of one configuration together."""
    rows = [
        f"### {name}",
        "",
        "| kind | requests | p50 (ms) | p95 (ms) | p99 (ms) | mean (ms) | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in ("append", "context", "all"):
        sample = [(dt, st) for r in runs for k, dt, st in r.latencies if kind in ("all", k)]
        lat = [dt for dt, _ in sample]
        rows.append(
            f"| {kind} | {len(lat)} | {1000 * percentile(lat, 50):.1f} | {1000 * percentile(lat, 95):.1f} | "
            f"{1000 * percentile(lat, 99):.1f} | {1000 * (statistics.mean(lat) if lat else float('nan')):.1f} | "
            f"{sum(1 for _, st in sample if st not in (200, 201))} |"
        )
    stored = sum(r.rows for r in runs)
    integrity = ", ".join(sorted({r.integrity for r in runs}))
    return rows + [
        "",
        f"{len(runs)} runs: appends acknowledged {sum(len(r.acked) for r in runs)} (plus "
        f"{sum(r.seeded for r in runs)} seed messages), message rows stored {stored}, lost "
        f"{sum(r.lost for r in runs)}; SQLite integrity_check: {integrity}.",
        "",
    ]


def machine_note() -> str:
    """What limits the CPU this benchmark can get on a shared Linux machine."""
    try:
        autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        autogroup = False
    if not autogroup:
        return ""
    return (
        " Linux autogroup scheduling is on: the clients and every server process of this benchmark share "
        "one scheduler group, so while other sessions keep the cores busy that group gets its share of the "
        "machine however many server processes it runs (compare the cores busy); more processes can only "
        "show their gain when the machine is otherwise idle."
    )


def report(results: list[Result], args: argparse.Namespace) -> str:
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.config.name, []).append(r)
    command = (
        f"python -m scripts.bench_server --clients {args.clients} --requests {args.requests} "
        f"--sessions {args.sessions} --repeat {args.repeat}"
    )
    if args.db:
        command += f" --db {redact_url(args.db)} --processes {args.processes}"
    return "\n".join(
        [
            "# afm-local serve: load test",
            "",
            f"`{command}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).",
            "",
            f"Machine: {os.cpu_count()} CPU cores ({platform.machine()}, {platform.system()}), Python "
            f"{platform.python_version()}, shared with other work (load average {os.getloadavg()[0]:.1f} at the end). "
            f"Every run sends the same {args.requests} requests ({args.append_share:.0%} appends, the rest context "
            f"builds with a {args.budget}-token budget) from {args.clients} client threads over {args.sessions} "
            f"sessions to a fresh store; the clients run on the same machine. The configurations take turns, "
            f"{args.repeat} rounds, and each figure is the median of its runs. Each server process has "
            f"--concurrency {args.concurrency} and one thread per native library; SQLite runs WAL + "
            f'synchronous=NORMAL, PostgreSQL (on the same machine) flushes every acknowledged commit. "N processes" '
            f"are N servers on their own ports, a session's requests going to one of them by its id (as a balancer "
            f'hashing the session id would); "--workers N" is one server whose N processes share one port, where '
            f"the kernel hands each connection to one of them, so every process serves every session. Server CPU "
            f"is the user + system time of the server processes during the requests (PostgreSQL's own not "
            f"included); cores busy is that time over the wall time. Lost = acknowledged appends missing from the "
            f"database afterwards.{machine_note()}",
            "",
            *summary_rows(groups),
            "",
            *[line for name, runs in groups.items() for line in detail_rows(name, runs)],
        ]
    )


def plan_configs(args: argparse.Namespace) -> list[tuple[str, int, bool]]:
    """(name, processes, on one port) of every configuration, SQLite first."""
    configs = [("SQLite, 1 process", 1, False)]
    if importlib.util.find_spec("sqlcipher3") is not None:
        configs.append((ENCRYPTED, 1, False))
    if args.db:
        configs.append(("PostgreSQL, 1 process", 1, False))
        if args.processes > 1:
            configs += [
                (f"PostgreSQL, {args.processes} processes", args.processes, False),
                (f"PostgreSQL, --workers {args.processes}", args.processes, True),
            ]
    return configs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--db",
        help="a postgresql:// URL: also run PostgreSQL with 1 and --processes processes "
        "(fresh databases are created on that server and dropped)",
    )
    ap.add_argument("--processes", type=int, default=2, help="worker processes of the PostgreSQL runs (default 2)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds over all configurations (medians are reported)")
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
    results = []
    for round_ in range(args.repeat):
        for k, (name, processes, one_port) in enumerate(plan_configs(args)):
            if not name.startswith("PostgreSQL"):
                config = Config(name, str(workdir / f"bench-{round_}-{k}.db"), 1, encrypted=name == ENCRYPTED)
                results.append(run(config, args, workdir))
                continue
            url, database = fresh_postgres_database(args.db)
            try:
                results.append(run(Config(name, url, processes, one_port), args, workdir))
            finally:
                drop_postgres_database(args.db, database)
    text = report(results, args)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    for r in results:
        if r.errors:
            print(f"{r.config.name}: first errors:", *r.errors[:5], sep="\n  ", file=sys.stderr)
    if any(
        r.errors or r.lost or r.rows != len(r.acked) + r.seeded or r.integrity not in ("ok", "n/a") for r in results
    ):
        print(f"server logs and SQLite files kept in {workdir}", file=sys.stderr)
        return 1
    shutil.rmtree(workdir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
