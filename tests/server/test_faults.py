"""Storage faults, on SQLite and on a real PostgreSQL: a store that cannot write answers 503 (507 when
the disk is full) with a clear JSON error and never acknowledges a write it did not store; a deleted or
replaced database is detected (health check fails, writes refused); startup errors are one line.
Every test checks, straight from the database, that no acknowledged message was lost."""

from __future__ import annotations

import os
import random
import shutil
import string
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from afm_local.server.store import open_store
from scripts.pgcluster import set_file_size_limit
from tests import THREAD_ENV
from tests.support.servers import REPO, free_port
from tests.support.stores import new_cluster, query, stored_messages


def client(srv) -> httpx.Client:
    return httpx.Client(base_url=srv.url, timeout=60.0, trust_env=False)


def append(c: httpx.Client, sid: str, text: str) -> httpx.Response:
    # importance given: these tests are about storage, not the classifier
    return c.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": text, "importance": "RELEVANT"})


def storage_error(r: httpx.Response, status: int, kind: str) -> None:
    assert r.status_code == status, r.text[:300]
    body = r.json()
    assert set(body) == {"error"} and body["error"]["type"] == kind and body["error"]["message"], body
    assert "Traceback" not in r.text


def big_text(rng: random.Random, words: int = 8000) -> str:
    """About 56 KB of random words: compression (PostgreSQL's TOAST) cannot make it small."""
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(words))


def start(spawn_server, db: str, name: str):
    srv = spawn_server("--db", db, "--no-abstractive", name=name)
    with client(srv) as c:
        sid = c.post("/v1/sessions").json()["id"]
    return srv, sid


# ------------------------------------------------------------------------------------------ lost database


def _lose(db: str, how: str, pg_cluster) -> None:
    """Delete the database under the running server, or put another one in its place."""
    if db.startswith("postgresql://"):
        name = db.rsplit("/", 1)[1]
        pg_cluster.drop_database(name)
        if how == "replaced":
            pg_cluster.create_database(name)
            open_store(db).close()  # migrated afresh: another store id
        return
    for suffix in ("", "-wal", "-shm"):
        Path(db + suffix).unlink(missing_ok=True)
    if how == "replaced":
        open_store(db).close()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_lost_database_is_detected_and_no_write_is_acknowledged(store_db, how, spawn_server, request):
    pg_cluster = request.getfixturevalue("pg_cluster") if store_db.startswith("postgresql://") else None
    srv, sid = start(spawn_server, store_db, f"lost-{how}")
    with client(srv) as c:
        acked = []
        for i in range(7):
            r = append(c, sid, f"Note {i}: the supplier call moved to {9 + i}:30.")
            assert r.status_code == 201, r.text
            acked.append(r.json()["id"])
        _lose(store_db, how, pg_cluster)
        storage_error(append(c, sid, "After the loss."), 503, "storage_unavailable")
        health = httpx.get(srv.url + "/healthz", trust_env=False, timeout=30)
        assert health.status_code == 503 and health.json()["status"] == "unavailable"
        storage_error(c.post("/v1/sessions"), 503, "storage_unavailable")
    if pg_cluster is None:
        # The file is gone, but what the server acknowledged is not: it saved what it could still read.
        rescued = sorted(Path(store_db).parent.glob(Path(store_db).name + ".recovered-*"))
        assert len(rescued) == 1, srv.log()
        assert [m for _, m in stored_messages(str(rescued[0]), sid)] == acked
        assert str(rescued[0]) in srv.log()
    if how == "replaced":
        assert query(store_db, "SELECT COUNT(*) FROM messages") == [(0,)]  # nothing went to the new one
    assert srv.alive()


# ------------------------------------------------------------------------------------------ full disk


def _fill_until_full(c: httpx.Client, sid: str, acked: list[str], limit_s: float = 120) -> int:
    """Append big messages until three in a row are refused as storage_full; returns how many were."""
    rng, refused, in_a_row = random.Random(7), 0, 0
    deadline = time.monotonic() + limit_s
    while in_a_row < 3 and time.monotonic() < deadline:
        r = append(c, sid, big_text(rng))
        if r.status_code == 201:
            acked.append(r.json()["id"])
            in_a_row = 0
        else:
            storage_error(r, 507, "storage_full")
            refused, in_a_row = refused + 1, in_a_row + 1
    assert in_a_row == 3, f"the store never filled up ({len(acked)} appends acknowledged)"
    return refused


def test_full_disk_sqlite_is_507_and_loses_nothing(spawn_server, tmp_path):
    """The issue's reproduction: a file-size limit on the server process (prlimit, while it runs)."""
    db = str(tmp_path / "full.db")
    srv, sid = start(spawn_server, db, "full-sqlite")
    acked: list[str] = []
    with client(srv) as c:
        for i in range(3):
            r = append(c, sid, f"Small note {i}.")
            assert r.status_code == 201
            acked.append(r.json()["id"])
        size = max(os.path.getsize(db + s) for s in ("", "-wal"))
        assert srv.proc is not None
        set_file_size_limit(srv.proc.pid, size + 300_000)
        _fill_until_full(c, sid, acked)
        assert httpx.get(srv.url + "/healthz", trust_env=False).status_code == 200  # reads still work
        set_file_size_limit(srv.proc.pid, None)
        r = append(c, sid, "Room again: this one is stored.")
        assert r.status_code == 201, r.text
        acked.append(r.json()["id"])
    srv.stop()
    assert [m for _, m in stored_messages(db, sid)] == acked  # every acknowledged message, once, in order
    again = spawn_server("--db", db, "--no-abstractive", name="full-sqlite-restart")
    with client(again) as c:
        assert [m["id"] for m in c.get(f"/v1/sessions/{sid}").json()["messages"]] == acked


def test_full_disk_postgres_is_507_and_loses_nothing(spawn_server):
    """PostgreSQL's own disk full (SQLSTATE 53100): a private cluster under a file-size limit a little
    over its 1 MiB WAL segments, so tables cannot grow while the WAL still works."""
    cluster = new_cluster(wal_segment_mb=1)
    try:
        db = cluster.create_database()
        srv, sid = start(spawn_server, db, "full-postgres")
        acked: list[str] = []
        with client(srv) as c:
            r = append(c, sid, "Small note.")
            assert r.status_code == 201
            acked.append(r.json()["id"])
            cluster.limit_file_size((1 << 20) + 4096)
            _fill_until_full(c, sid, acked)
            cluster.limit_file_size(None)
            r = append(c, sid, "Room again: this one is stored.")
            assert r.status_code == 201, r.text
            acked.append(r.json()["id"])
        assert [m for _, m in stored_messages(db, sid)] == acked
        assert cluster.password not in srv.log()
    finally:
        cluster.destroy()


# ------------------------------------------------------------------------------------------ outage


def test_postgres_outage_is_503_and_the_server_recovers(spawn_server):
    """PostgreSQL crashes (immediate stop) and comes back: meanwhile 503 and a failing health check,
    afterwards writes go on, and every acknowledged message is there once, in order."""
    cluster = new_cluster()
    try:
        db = cluster.create_database()
        srv, sid = start(spawn_server, db, "outage")
        acked: list[str] = []
        with client(srv) as c:
            for i in range(5):
                acked.append(append(c, sid, f"Before the outage {i}.").json()["id"])
            cluster.stop("immediate")
            storage_error(append(c, sid, "During the outage."), 503, "storage_unavailable")
            assert httpx.get(srv.url + "/healthz", trust_env=False, timeout=30).status_code == 503
            cluster.start()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                r = append(c, sid, "After the outage.")
                if r.status_code == 201:
                    acked.append(r.json()["id"])
                    break
                storage_error(r, 503, "storage_unavailable")
                time.sleep(1)
            assert r.status_code == 201, srv.log()
            assert httpx.get(srv.url + "/healthz", trust_env=False).status_code == 200
        assert [m for _, m in stored_messages(db, sid)] == acked
        assert cluster.password not in srv.log()
    finally:
        cluster.destroy()


# ------------------------------------------------------------------------------------------ startup errors


def serve_once(db: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``afm-local serve`` that is expected to refuse to start."""
    full_env = {**os.environ, **THREAD_ENV, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "afm_local", "serve", "--port", str(free_port()), "--db", db],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("afm-local: error:")]
    assert len(errors) == 1, proc.stderr[-2000:]
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.fixture
def read_only_folder(tmp_path: Path):
    """A folder whose files cannot be written: a read-only bind mount as root (who ignores file modes),
    file modes otherwise."""
    writable, folder = tmp_path / "rw", tmp_path / "ro"
    writable.mkdir()
    folder.mkdir()
    yield writable, folder
    if os.geteuid() == 0:
        subprocess.run(["umount", str(folder)], capture_output=True)
    else:
        for path in (writable, *writable.iterdir()):
            path.chmod(0o755)


def _make_read_only(writable: Path, folder: Path) -> Path:
    if os.geteuid() != 0:
        for path in writable.iterdir():
            path.chmod(0o444)
        writable.chmod(0o555)
        return writable
    for args in (["mount", "--bind", str(writable), str(folder)], ["mount", "-o", "remount,bind,ro", str(folder)]):
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot make a read-only bind mount here: {done.stderr.strip()}")
    return folder


def test_read_only_sqlite_refuses_to_start_in_one_line(read_only_folder):
    writable, folder = read_only_folder
    store = open_store(writable / "x.db")
    store.tenant("default").create_session()
    store.close()
    where = _make_read_only(writable, folder)
    one_line_error(serve_once(str(where / "x.db")), "read-only")


def test_read_only_postgres_refuses_to_start_in_one_line(pg_cluster, pg_db):
    open_store(pg_db).close()
    with pg_cluster.admin() as conn:
        conn.execute(f"ALTER DATABASE {pg_db.rsplit('/', 1)[1]} SET default_transaction_read_only = on")
    line = one_line_error(serve_once(pg_db), "read-only")
    assert pg_cluster.password not in line


def test_postgres_startup_errors_are_one_line_without_the_password(pg_cluster, tmp_path):
    dsn = pg_cluster.dsn()
    wrong = dsn.replace(pg_cluster.password, "Wrong-Secret-42")
    line = one_line_error(serve_once(wrong), "password authentication failed", "afm:***@")
    assert "Wrong-Secret-42" not in line
    closed = dsn.replace(f":{pg_cluster.port}/", f":{free_port()}/")
    assert pg_cluster.password not in one_line_error(serve_once(closed), "cannot connect", "refused")
    missing = dsn.rsplit("/", 1)[0] + "/no_such_database"
    one_line_error(serve_once(missing), "does not exist")
    # Without the postgres extra: the fix is named. (A package on the path that fails to import stands in
    # for an environment without psycopg.)
    stub = tmp_path / "no-psycopg" / "psycopg"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('No module named psycopg', name='psycopg')\n")
    proc = serve_once(dsn, env={"PYTHONPATH": f"{stub.parent}{os.pathsep}{REPO}"})
    assert pg_cluster.password not in one_line_error(proc, "pip install 'afm-local[postgres]'")
    shutil.rmtree(stub.parent)
