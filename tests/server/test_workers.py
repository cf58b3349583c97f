"""Several ``afm-local serve`` workers on one store: separate processes on their own ports, and
``--workers N`` on one port. Any worker answers for any session at once; a worker killed in the middle
of a write burst loses no acknowledged message, and the order stays total and gap-free."""

from __future__ import annotations

import os
import signal
import threading
import time

import httpx
import pytest

from tests.support.servers import metric
from tests.support.stores import stored_messages

QUERY = "When is the supplier call?"


def client(srv) -> httpx.Client:
    return httpx.Client(base_url=srv.url, timeout=60.0, trust_env=False)


def test_any_worker_answers_for_any_session_at_once(pg_db, spawn_server):
    a = spawn_server("--db", pg_db, "--no-abstractive", name="worker-a")
    b = spawn_server("--db", pg_db, "--no-abstractive", name="worker-b")
    with client(a) as ca, client(b) as cb:
        sid = ca.post("/v1/sessions").json()["id"]
        for text in (
            "[!] Never schedule calls before 10:00.",
            "The supplier is in Porto.",
            "Call them about order 4411.",
        ):
            assert ca.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": text}).status_code == 201
        r = cb.post(f"/v1/sessions/{sid}/context", json={"query": QUERY, "budget_tokens": 300})
        assert r.status_code == 200 and len(r.json()["items"]) == 3
        r = ca.post(f"/v1/sessions/{sid}/context", json={"query": QUERY, "budget_tokens": 300})  # A has the query now
        misses = metric(ca.get("/metrics").text, "afm_cache_misses_total", cache="session")

        r = cb.post(
            f"/v1/sessions/{sid}/messages", json={"role": "assistant", "content": "Booked for 11:30 on Tuesday."}
        )
        assert r.status_code == 201 and r.json()["seq"] == 3
        r = ca.post(f"/v1/sessions/{sid}/context", json={"query": QUERY, "budget_tokens": 300})
        assert r.status_code == 200
        items, sent = r.json()["items"], " ".join(m["content"] for m in r.json()["messages"])
        assert len(items) == 4 and items[3]["role"] == "assistant" and "11:30" in sent  # B's, in A's next context
        # A took B's message in from the shared store: its artifacts came from PostgreSQL, no model ran.
        assert metric(ca.get("/metrics").text, "afm_cache_misses_total", cache="session") == misses

        listed = ca.get(f"/v1/sessions/{sid}").json()["messages"]
        assert [m["seq"] for m in listed] == [0, 1, 2, 3] and listed[0]["importance"] == "CRITICAL"
        assert cb.get(f"/v1/sessions/{sid}").json()["messages"] == listed
        assert cb.delete(f"/v1/sessions/{sid}").status_code == 200
        assert ca.get(f"/v1/sessions/{sid}").status_code == 404
        assert ca.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": "x"}).status_code == 404


class Burst:
    """Writers appending to shared sessions through given workers until stopped; what each got acknowledged."""

    def __init__(self, routes: list[tuple[str, str]]) -> None:  # (server url, session id) per writer
        self.routes = routes
        self.acked: list[list[str]] = [[] for _ in routes]
        self.failures: list[str] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._write, args=(k,)) for k in range(len(routes))]

    def _write(self, k: int) -> None:
        url, sid = self.routes[k]
        with httpx.Client(base_url=url, timeout=60.0, trust_env=False) as c:
            i = 0
            while not self.stop.is_set():
                text = f"Writer {k} note {i}: order #{1000 + i} ships on day {1 + i % 28}."
                try:
                    r = c.post(
                        f"/v1/sessions/{sid}/messages", json={"role": "user", "content": text, "importance": "RELEVANT"}
                    )
                except httpx.HTTPError:
                    return  # its worker died: this one was never acknowledged
                if r.status_code == 201:
                    self.acked[k].append(r.json()["id"])
                else:
                    self.failures.append(r.text[:300])
                i += 1

    def run_until(self, total: int, timeout: float = 120.0) -> None:
        for t in self.threads:
            t.start()
        deadline = time.monotonic() + timeout
        while sum(map(len, self.acked)) < total and time.monotonic() < deadline and not self.failures:
            time.sleep(0.02)

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)


def check_sessions(db: str, sids: list[str], writers: list[tuple[int, list[str]]], in_flight: int) -> None:
    """Every acknowledged message stored exactly once, each writer's in the order acknowledged, positions
    0..n-1; at most ``in_flight`` stored messages were never acknowledged (their worker died first)."""
    unacknowledged = 0
    for sid in sids:
        rows = stored_messages(db, sid)
        assert [seq for seq, _ in rows] == list(range(len(rows))), "the order has a gap"
        ids = [m for _, m in rows]
        assert len(set(ids)) == len(ids), "a message was stored twice"
        position = {m: i for i, m in enumerate(ids)}
        mine = [acked for s, acked in writers if s == sids.index(sid)]
        for acked in mine:
            assert all(m in position for m in acked), "an acknowledged message was lost"
            assert [position[m] for m in acked] == sorted(position[m] for m in acked), "a writer's order changed"
        unacknowledged += len(ids) - sum(map(len, mine))
    assert 0 <= unacknowledged <= in_flight


def test_sigkill_of_one_of_two_workers_loses_no_acknowledged_message(store_db, spawn_server):
    """Three rounds: four writers, two per worker, both workers on both sessions; one worker is killed
    (SIGKILL) in the middle of the burst, then started again."""
    workers = [spawn_server("--db", store_db, "--no-abstractive", name=f"worker-{k}") for k in range(2)]
    with client(workers[0]) as c:
        sids = [c.post("/v1/sessions").json()["id"] for _ in range(2)]
    history: list[tuple[int, list[str]]] = []  # (session index, acknowledged ids) per writer and round
    for round_ in range(3):
        victim = round_ % 2
        routes = [(workers[k % 2].url, sids[k // 2]) for k in range(4)]
        burst = Burst(routes)
        burst.run_until(total=30 * (round_ + 1))
        workers[victim].kill()
        time.sleep(0.3)  # the survivor keeps writing for a moment
        burst.finish()
        assert not burst.failures, burst.failures[:3]
        assert all(burst.acked[k] for k in range(4)), "a writer got nothing acknowledged"
        history += [(k // 2, burst.acked[k]) for k in range(4)]
        workers[victim] = spawn_server("--db", store_db, "--no-abstractive", name=f"worker-{victim}-r{round_}")
    check_sessions(store_db, sids, history, in_flight=2 * 3)
    for srv in workers:  # both (restarted) workers serve the whole, same history
        with client(srv) as c:
            for sid in sids:
                assert [m["id"] for m in c.get(f"/v1/sessions/{sid}").json()["messages"]] == [
                    m for _, m in stored_messages(store_db, sid)
                ]


def test_serve_workers_share_one_port_and_a_killed_worker_is_replaced(pg_db, spawn_server):
    srv = spawn_server("--db", pg_db, "--workers", "2", "--no-abstractive", name="workers")
    deadline = time.monotonic() + 60
    while len(srv.children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    first = srv.children()
    assert len(first) == 2, srv.log()
    with client(srv) as c:
        sid = c.post("/v1/sessions").json()["id"]
    burst = Burst([(srv.url, sid)] * 4)
    burst.run_until(total=30)
    os.kill(first[0], signal.SIGKILL)
    deadline = time.monotonic() + 120  # the supervisor starts a replacement (it loads the models first)
    while (first[0] in srv.children() or len(srv.children()) < 2) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(srv.children()) == 2 and first[0] not in srv.children(), srv.log()
    burst.stop.set()
    for t in burst.threads:
        t.join(timeout=60)
    # The writers whose connection went to the killed worker stopped; the others went on. Start again.
    assert not burst.failures, burst.failures[:3]
    again = Burst([(srv.url, sid)] * 4)
    again.run_until(total=20)
    again.finish()
    assert not again.failures, again.failures[:3]
    check_sessions(pg_db, [sid], [(0, a) for a in burst.acked + again.acked], in_flight=4)
    assert srv.alive()


@pytest.mark.parametrize("workers", ["0", "-1"])
def test_workers_must_be_positive(workers, tmp_path):
    import subprocess
    import sys

    from tests import THREAD_ENV
    from tests.support.servers import REPO

    proc = subprocess.run(
        [sys.executable, "-m", "afm_local", "serve", "--db", str(tmp_path / "w.db"), "--workers", workers],
        cwd=REPO,
        env={**os.environ, **THREAD_ENV, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "workers must be a positive integer" in proc.stderr
    assert "Traceback" not in proc.stderr
