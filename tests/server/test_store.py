"""The store on its own, on SQLite and on a real PostgreSQL: ordering under concurrent appends from
several store instances (as several workers hold them), named migrations, identity and URL handling."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from afm_local.core.errors import QuotaExceeded, StoreError, StoreUnavailable, UnknownSession
from afm_local.server.store import Quota, open_store, redact_url
from afm_local.server.store import sqlite as sqlite_store
from afm_local.server.store.schema import MIGRATIONS
from tests.support.stores import query, stored_messages

WRITERS, PER_WRITER = 8, 40


def test_concurrent_appends_from_two_stores_are_total_and_gap_free(store_db):
    """Two store instances (two workers' worth of connections), eight threads, one session: every
    append gets its own position, positions run 0..n-1, and each writer's messages keep its order."""
    opened = [open_store(store_db), open_store(store_db)]
    stores = [store.tenant("default") for store in opened]
    try:
        sid = stores[0].create_session()["id"]
        seqs: dict[int, list[int]] = {}
        errors: list[BaseException] = []
        start = threading.Barrier(WRITERS)

        def writer(k: int) -> None:
            store, mine = stores[k % 2], []
            start.wait()
            try:
                for i in range(PER_WRITER):
                    mine.append(store.append_message(sid, f"w{k}-{i}", "user", f"writer {k} message {i}", None)["seq"])
            except BaseException as exc:  # reported below
                errors.append(exc)
            seqs[k] = mine

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        total = WRITERS * PER_WRITER
        assert sorted(s for mine in seqs.values() for s in mine) == list(range(total))
        assert all(mine == sorted(mine) for mine in seqs.values())
        rows = stored_messages(store_db, sid)
        assert [seq for seq, _ in rows] == list(range(total))
        assert len({mid for _, mid in rows}) == total
        count, listed = stores[1].messages_since(sid, total - 5)  # type: ignore[misc]
        assert count == total and [r["seq"] for r in listed] == list(range(total - 5, total))
        assert stores[1].list_sessions()[0]["messages"] == total
    finally:
        for store in opened:
            store.close()


def test_sessions_messages_and_artifacts_round_trip(store_db):
    opened = open_store(store_db)
    store = opened.tenant("default")
    try:
        sid = store.create_session()["id"]
        assert store.get_session(sid)["id"] == sid  # type: ignore[index]
        row = store.append_message(sid, "m1", "user", "I am allergic to peanuts", "CRITICAL")
        assert row["seq"] == 0 and row["importance"] == "CRITICAL"
        with pytest.raises(UnknownSession):
            store.append_message("A" * 24, "m2", "user", "x", None)
        assert store.messages_since("A" * 24) is None and store.messages_since("../etc") is None
        store.save_artifact(sid, "embedding", "e:abc", b"\x00\x01")
        store.save_artifact(sid, "embedding", "e:abc", b"\x02")  # an upsert, not a conflict
        assert store.load_artifact(sid, "embedding", "e:abc") == b"\x02"
        assert store.load_artifact(sid, "embedding", "e:none") is None
        other = store.create_session()["id"]  # the same tenant's other session gets its own copy
        assert store.load_artifact(other, "embedding", "e:abc") == b"\x02"
        assert query(store_db, "SELECT COUNT(*) FROM artifacts WHERE key = 'e:abc'") == [(2,)]
        store.save_artifact("B" * 24, "embedding", "e:x", b"\x03")  # no such session: dropped, no error
        assert store.erase_session(sid) and not store.erase_session(sid)
        assert store.get_session(sid) is None and stored_messages(store_db, sid) == []
        assert query(store_db, "SELECT session_id FROM artifacts") == [(other,)]
        opened.check()
    finally:
        opened.close()


def test_a_tenant_reaches_only_its_own_rows(store_db):
    """Every operation of one tenant's view on another tenant's session answers as for a missing one."""
    opened = open_store(store_db)
    alice, bob = opened.tenant("alice"), opened.tenant("bob")
    try:
        sid = alice.create_session()["id"]
        alice.append_message(sid, "m1", "user", "alice's secret", None)
        alice.save_artifact(sid, "topic", "t:1", b"alice topic")
        mine = bob.create_session()["id"]
        assert bob.get_session(sid) is None and bob.messages_since(sid) is None
        assert bob.load_artifact(mine, "topic", "t:1") is None and bob.load_artifact(sid, "topic", "t:1") is None
        with pytest.raises(UnknownSession):
            bob.append_message(sid, "m2", "user", "bob's", None)
        bob.save_artifact(sid, "topic", "t:2", b"bob into alice")  # not bob's session: dropped
        assert not bob.erase_session(sid) and [s["id"] for s in bob.list_sessions()] == [mine]
        assert bob.erase() == 1 and bob.usage() == {"sessions": 0, "messages": 0, "bytes": 0}
        assert alice.messages_since(sid)[1][0]["content"] == "alice's secret"  # type: ignore[index]
        assert query(store_db, "SELECT COUNT(*) FROM artifacts") == [(1,)]
    finally:
        opened.close()


def test_quotas_refuse_before_writing(store_db):
    opened = open_store(store_db)
    store = opened.tenant("t", Quota(sessions=1, messages=2, bytes=10))
    try:
        sid = store.create_session()["id"]
        with pytest.raises(QuotaExceeded, match="quota-sessions"):
            store.create_session()
        store.append_message(sid, "a", "user", "12345", None)
        with pytest.raises(QuotaExceeded, match="quota-bytes"):
            store.append_message(sid, "b", "user", "123456", None)
        store.append_message(sid, "b", "user", "12345", None)
        with pytest.raises(QuotaExceeded, match="quota-messages"):
            store.append_message(sid, "c", "user", "1", None)
        assert store.usage() == {"sessions": 1, "messages": 2, "bytes": 10}
    finally:
        opened.close()


def test_postgres_row_level_security_holds_without_the_store(pg_db):
    """The database itself refuses other tenants' rows: a transaction as the tenant role that sets tenant
    bob sees none of alice's rows and cannot write into her session; one that sets no tenant sees nothing."""
    import psycopg

    opened = open_store(pg_db)
    alice = opened.tenant("alice")
    sid = alice.create_session()["id"]
    alice.append_message(sid, "m1", "user", "alice's secret", None)
    opened.tenant("bob").create_session()
    opened.close()
    with psycopg.connect(pg_db) as conn:
        conn.execute("SET ROLE afm_local_tenant")
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)  # no tenant set: no rows
        conn.execute("SELECT set_config('app.tenant', 'bob', false)")
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone() == (1,)
        assert conn.execute("UPDATE sessions SET next_seq = 99 WHERE id = %s", (sid,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the policy's WITH CHECK
            conn.execute(
                "INSERT INTO messages (tenant_id, session_id, seq, message_id, role, content, created) "
                "VALUES ('alice', %s, 5, 'x', 'user', 'forged', 0)",
                (sid,),
            )


def test_migrations_are_named_idempotent_and_refuse_a_newer_database(store_db):
    first = open_store(store_db)
    store_id = first.store_id  # type: ignore[attr-defined]
    first.close()
    again = open_store(store_db)  # nothing left to apply; the identity is kept
    assert again.store_id == store_id  # type: ignore[attr-defined]
    again.close()
    applied = [name for (name,) in query(store_db, "SELECT name FROM _migrations ORDER BY name")]
    assert applied == [m.name for m in MIGRATIONS]
    query(store_db, "INSERT INTO _migrations (name, applied) VALUES ('m999_from_the_future', 0)")
    with pytest.raises(StoreError, match="newer afm-local.*m999_from_the_future"):
        open_store(store_db)


def test_a_database_from_before_named_migrations_is_adopted(tmp_path):
    """A SQLite file written by the previous release (``schema_version`` = 1) opens with its messages,
    gets the new migrations, and its version is raised so that the previous release refuses it."""
    db = tmp_path / "legacy.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        MIGRATIONS[0].sql.format(real="REAL", blob="BLOB", without_rowid="WITHOUT ROWID")
        + """;
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (1);
        INSERT INTO sessions VALUES ('legacy-session-0000000', 1.0);
        INSERT INTO messages VALUES ('legacy-session-0000000', 0, 'a', 'user', 'first', NULL, 1.0);
        INSERT INTO messages VALUES ('legacy-session-0000000', 1, 'b', 'user', 'second', NULL, 2.0);"""
    )
    conn.commit()
    conn.close()
    opened = open_store(db)
    store = opened.tenant("default")  # what was stored before tenants is the default tenant's
    try:
        assert store.append_message("legacy-session-0000000", "c", "user", "third", None)["seq"] == 2
        count, rows = store.messages_since("legacy-session-0000000")  # type: ignore[misc]
        assert count == 3 and [r["id"] for r in rows] == ["a", "b", "c"]
        assert store.usage() == {"sessions": 1, "messages": 3, "bytes": len("firstsecondthird")}
    finally:
        opened.close()
    assert query(str(db), "SELECT version FROM schema_version") == [(2,)]


def test_workers_migrating_at_once_agree(pg_db):
    """Several workers starting together on an empty database: one migrates, the others wait and agree."""
    ids, errors = [], []

    def opener() -> None:
        try:
            store = open_store(pg_db)
            ids.append(store.store_id)  # type: ignore[attr-defined]
            store.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(ids) == 4 and len(set(ids)) == 1


def test_a_replaced_postgres_database_is_refused(pg_cluster, pg_db):
    """Dropped and created again under the same name (then migrated by another store): a new connection
    finds another store id, the health check fails, and nothing is written there."""
    store = open_store(pg_db)
    try:
        sid = store.tenant("default").create_session()["id"]
        name = pg_db.rsplit("/", 1)[1]
        pg_cluster.drop_database(name)
        pg_cluster.create_database(name)
        open_store(pg_db).close()  # someone else's fresh store under the same name
        reasons = []
        for _ in range(3):  # a pooled connection the drop broke fails once first, then a new one is checked
            with pytest.raises(StoreUnavailable) as info:
                store.check()
            reasons.append(str(info.value))
            if "replaced" in reasons[-1]:
                break
        assert "replaced" in reasons[-1], reasons
        with pytest.raises(StoreUnavailable, match="replaced"):
            store.tenant("default").append_message(sid, "m", "user", "x", None)
        assert query(pg_db, "SELECT COUNT(*) FROM messages") == [(0,)]
    finally:
        store.close()


def test_urls_never_show_their_password(pg_cluster):
    assert (
        redact_url("postgresql://u:s3cret@h:5432/db?sslmode=require&password=p2")
        == "postgresql://u:***@h:5432/db?sslmode=require&password=***"
    )
    assert redact_url("postgresql://u@h/db") == "postgresql://u@h/db"
    wrong = pg_cluster.dsn().replace(pg_cluster.password, "wrong-pass-Zx9")
    with pytest.raises(StoreUnavailable) as info:
        open_store(wrong)
    assert "password authentication failed" in str(info.value) and "wrong-pass-Zx9" not in str(info.value)


def _handles(db: Path) -> int:
    """Open file handles of this process on the database file (each SQLite connection holds one)."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(db.resolve()))


@pytest.mark.parametrize("key", [None, "a passphrase"], ids=["plain", "encrypted"])
def test_sqlite_connections_are_pooled_not_per_thread(tmp_path, key):
    """Worker threads come and go (anyio retires idle ones); the store's connections do not: 40 short-lived
    threads leave it with the connections it opened with (no new ones, whose SQLCipher key derivation would
    run inside a request, none left open behind a finished thread), and closing the store closes them all."""
    if key is not None:
        pytest.importorskip("sqlcipher3", reason="the encryption extra is not installed (scripts/setup.sh dev)")
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to count file handles")
    db = tmp_path / "pool.db"
    store = open_store(db, pool_size=3, encryption_key=key)
    assert _handles(db) == 3
    tenant = store.tenant("default")
    sid = tenant.create_session()["id"]

    def use(i: int) -> None:
        tenant.append_message(sid, f"m{i}", "user", f"message {i}", None)
        tenant.messages_since(sid, 0)

    for batch in range(10):
        threads = [threading.Thread(target=use, args=(4 * batch + j,)) for j in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert _handles(db) == 3
    assert tenant.messages_since(sid, 0)[0] == 40
    store.close()
    assert _handles(db) == 0


def test_sqlite_pool_exhaustion_and_close_are_one_line_errors(tmp_path, monkeypatch):
    """A transaction that finds every pooled connection busy waits POOL_WAIT_S, then is refused with a
    StoreUnavailable (a 503), not a hang; the connection comes back after a failed transaction, and a
    closed store refuses instead of reopening the file."""
    monkeypatch.setattr(sqlite_store, "POOL_WAIT_S", 0.2)
    store = open_store(tmp_path / "one.db", pool_size=1)
    tenant = store.tenant("default")
    with pytest.raises(UnknownSession):
        tenant.append_message("missing-session-0001", "m0", "user", "hello", None)
    store.check()  # the failed append gave its connection back
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store._transaction(write=False):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        with pytest.raises(StoreUnavailable, match="no database connection came free in 0 s, all 1 in use"):
            store.check()
    finally:
        release.set()
        holder.join()
    store.check()
    store.close()
    with pytest.raises(StoreUnavailable, match="the store is closed"):
        store.check()
