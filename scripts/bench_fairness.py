"""Fairness between tenants of one ``afm-local serve``: a heavy tenant keeps ``--heavy-clients`` large
stateless packings (``POST /v1/context`` with ``--messages`` new messages each, so each is real work) in
flight, and another tenant makes small requests (``GET /v1/sessions``) one after another meanwhile. Prints
the light tenant's latency (median, p95, max) and the heavy calls' durations, per server: this tree, and
with ``--base DIR`` a checkout of another revision (``git worktree add /tmp/afm-base <rev>``, or
``git archive <rev> | tar -x -C /tmp/afm-base`` with ``--base-label <rev>``; it needs the models folder)
served the same way, beside it.

    python -m scripts.bench_fairness                                  # this tree
    python -m scripts.bench_fairness --base /tmp/afm-base --out docs/benchmarks/fairness.md

Every server: SQLite in a temporary folder, ``--concurrency 2`` (the default), no rate limit, one thread
per model. Exit status 1 when a request failed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx

from scripts.bench_server import THREAD_ENV, free_port, percentile
from scripts.common import ROOT


def create_key(repo: Path, db: str, tenant: str) -> str:
    env = {**os.environ, **THREAD_ENV, "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [sys.executable, "-m", "afm_local", "keys", "create", "--tenant", tenant, "--db", db],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return done.stdout.strip()


def start(repo: Path, db: str, workdir: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, **THREAD_ENV, "PYTHONPATH": str(repo)}
    log = (workdir / f"{name}.log").open("wb")
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
            "--db",
            db,
            "--no-abstractive",
            "--rate-limit",
            "0",
        ],
        cwd=repo,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{name}: the server exited; see {workdir / name}.log")
        try:
            if httpx.get(url + "/healthz", timeout=2, trust_env=False).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"{name}: the server did not start")


def heavy_body(n_messages: int) -> dict:
    tag = uuid.uuid4().hex[:8]
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Day {i} of trip {tag}: we compare the trains and hotels of Kyoto, Osaka and Nara again.",
        }
        for i in range(n_messages)
    ]
    return {"messages": messages, "query": "Which hotel did we pick?", "budget_tokens": 1000}


def run(repo: Path, label: str, args: argparse.Namespace, workdir: Path) -> dict:
    db = str(workdir / f"{label}.db")
    keys = {t: create_key(repo, db, t) for t in ("heavy", "light")}
    proc, url = start(repo, db, workdir, label)
    heavy_times: list[float] = []
    light: list[float] = []
    errors: list[str] = []
    stop = threading.Event()

    def heavy() -> None:
        with httpx.Client(
            base_url=url, timeout=3600, trust_env=False, headers={"Authorization": f"Bearer {keys['heavy']}"}
        ) as client:
            while not stop.is_set():
                t0 = time.monotonic()
                r = client.post("/v1/context", json=heavy_body(args.messages))
                if r.status_code != 200:
                    errors.append(f"heavy {r.status_code}: {r.text[:200]}")
                    return
                heavy_times.append(time.monotonic() - t0)

    try:
        threads = [threading.Thread(target=heavy, daemon=True) for _ in range(args.heavy_clients)]
        for t in threads:
            t.start()
        time.sleep(args.warmup)
        with httpx.Client(
            base_url=url, timeout=3600, trust_env=False, headers={"Authorization": f"Bearer {keys['light']}"}
        ) as client:
            for _ in range(args.light_requests):
                t0 = time.monotonic()
                r = client.get("/v1/sessions")
                light.append(time.monotonic() - t0)
                if r.status_code != 200:
                    errors.append(f"light {r.status_code}")
                time.sleep(args.pause)
        stop.set()
        for t in threads:
            t.join(timeout=3600)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {"label": label, "light": light, "heavy": heavy_times, "errors": errors}


def table(results: list[dict], args: argparse.Namespace) -> str:
    lines = [
        f"Heavy tenant: {args.heavy_clients} clients, each `POST /v1/context` with {args.messages} new messages, "
        f"again and again; light tenant: {args.light_requests} × `GET /v1/sessions`, {args.pause:g} s apart.",
        "",
        "| server | light median (s) | light p95 (s) | light max (s) | heavy calls | heavy median (s) | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        heavy = statistics.median(r["heavy"]) if r["heavy"] else float("nan")
        lines.append(
            f"| {r['label']} | {statistics.median(r['light']):.2f} | {percentile(r['light'], 95):.2f} | "
            f"{max(r['light']):.2f} | {len(r['heavy'])} | {heavy:.1f} | {len(r['errors'])} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heavy-clients", type=int, default=2)
    parser.add_argument("--messages", type=int, default=500, help="messages in each heavy packing")
    parser.add_argument("--light-requests", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.25, help="seconds between light requests")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds the heavy clients run alone first")
    parser.add_argument("--base", type=Path, help="a checkout of the revision to compare with")
    parser.add_argument("--base-label", default="", help="what to call --base (default: its git revision)")
    parser.add_argument("--out", type=Path, help="also write the table here (markdown)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="afm-fairness-") as tmp:
        workdir = Path(tmp)
        results = []
        if args.base is not None:
            base_rev = (
                args.base_label
                or subprocess.run(
                    ["git", "rev-parse", "--short", "HEAD"], cwd=args.base, capture_output=True, text=True
                ).stdout.strip()
            )
            results.append(run(args.base.resolve(), f"base {base_rev}".strip(), args, workdir))
        rev = (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
            ).stdout.strip()
            or "this tree"
        )
        results.append(run(ROOT, f"this tree ({rev})", args, workdir))
    text = table(results, args)
    print(text)
    if args.out is not None:
        args.out.write_text("# Fairness between tenants\n\n`python -m scripts.bench_fairness`\n\n" + text)
    for r in results:
        for error in r["errors"][:5]:
            print(f"{r['label']}: {error}", file=sys.stderr)
    return 1 if any(r["errors"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
