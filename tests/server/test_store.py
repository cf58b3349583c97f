"""The store on its own, on SQLite and on a real PostgreSQL: ordering under concurrent appends from
several store instances (as several workers hold them), named migrations, identity and URL handling."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from afm_local.core.errors import StoreError, StoreUnavailable, UnknownSession
from afm_local.server.store import open_store, redact_url
from afm_local.server.store.schema import MIGRATIONS

from tests.support.stores import query, stored_messages

WRITERS, PER_WRITER = 8, 40


def test_concurrent_appends_from_two_stores_are_total_and_gap_free(store_db):
    """Two store instances (two workers' worth of connections), eight threads, one session: every
    append gets its own position, positions run 0..n-1, and each writer's messages keep its order."""
    stores = [open_store(store_db), open_store(store_db)]
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
        for store in stores:
            store.close()


def test_sessions_messages_and_artifacts_round_trip(store_db):
    store = open_store(store_db)
    try:
        sid = store.create_session()["id"]
        assert store.get_session(sid)["id"] == sid  # type: ignore[index]
        row = store.append_message(sid, "m1", "user", "I am allergic to peanuts", "CRITICAL")
        assert row["seq"] == 0 and row["importance"] == "CRITICAL"
        with pytest.raises(UnknownSession):
            store.append_message("A" * 24, "m2", "user", "x", None)
        assert store.messages_since("A" * 24) is None and store.messages_since("../etc") is None
        store.save_artifact("embedding", "e:abc", b"\x00\x01")
        store.save_artifact("embedding", "e:abc", b"\x02")  # an upsert, not a conflict
        assert store.load_artifact("embedding", "e:abc") == b"\x02"
        assert store.load_artifact("embedding", "e:none") is None
        assert store.delete_session(sid) and not store.delete_session(sid)
        assert store.get_session(sid) is None and stored_messages(store_db, sid) == []
        store.check()
    finally:
        store.close()


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
    conn.executescript(MIGRATIONS[0].sql.format(real="REAL", blob="BLOB", without_rowid="WITHOUT ROWID") + """;
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (1);
        INSERT INTO sessions VALUES ('legacy-session-0000000', 1.0);
        INSERT INTO messages VALUES ('legacy-session-0000000', 0, 'a', 'user', 'first', NULL, 1.0);
        INSERT INTO messages VALUES ('legacy-session-0000000', 1, 'b', 'user', 'second', NULL, 2.0);""")
    conn.commit()
    conn.close()
    store = open_store(db)
    try:
        assert store.append_message("legacy-session-0000000", "c", "user", "third", None)["seq"] == 2
        count, rows = store.messages_since("legacy-session-0000000")  # type: ignore[misc]
        assert count == 3 and [r["id"] for r in rows] == ["a", "b", "c"]
    finally:
        store.close()
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
        sid = store.create_session()["id"]
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
            store.append_message(sid, "m", "user", "x", None)
        assert query(pg_db, "SELECT COUNT(*) FROM messages") == [(0,)]
    finally:
        store.close()


def test_urls_never_show_their_password(pg_cluster):
    assert redact_url("postgresql://u:s3cret@h:5432/db?sslmode=require&password=p2") == \
        "postgresql://u:***@h:5432/db?sslmode=require&password=***"
    assert redact_url("postgresql://u@h/db") == "postgresql://u@h/db"
    wrong = pg_cluster.dsn().replace(pg_cluster.password, "wrong-pass-Zx9")
    with pytest.raises(StoreUnavailable) as info:
        open_store(wrong)
    assert "password authentication failed" in str(info.value) and "wrong-pass-Zx9" not in str(info.value)
