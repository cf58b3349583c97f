"""The store stays consistent: artifact lookups are indexed (the query plans, on a real SQLite file), and
what a refused write derived from its file does not outlive it (a real server, restarted)."""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import time

import httpx
import pytest

from afm_local.server.store import open_store
from afm_local.server.store.tenant import ARTIFACT_OWN, ARTIFACT_OWNER
from tests.server.test_server import is_error
from tests.support.real import installed
from tests.support.stores import query


def plan(db: str, sql: str, params: tuple) -> str:
    with sqlite3.connect(db) as conn:
        return " | ".join(row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))


def test_artifact_lookups_use_the_primary_key_and_artifacts_by_key(tmp_path):
    db = str(tmp_path / "plan.db")
    store = open_store(db, pool_size=1)
    try:
        tenant = store.tenant("t")
        owner, other = tenant.create_session()["id"], tenant.create_session()["id"]
        for n in range(3000):  # enough rows that a scan of the tenant's artifacts would be the slow path
            tenant.save_artifact(owner, "embedding", f"e5:{n:064x}", b"x" * 64)
        own = plan(db, ARTIFACT_OWN, ("t", owner, "embedding", "e5:1"))
        assert "USING PRIMARY KEY (tenant_id=? AND session_id=? AND kind=? AND key=?)" in own, own
        shared = plan(db, ARTIFACT_OWNER, ("t", "embedding", "e5:1"))
        assert "COVERING INDEX artifacts_by_key (tenant_id=? AND kind=? AND key=?)" in shared, shared
        # what the lookups do: the session's own row, else a copy of another session's, else nothing
        assert tenant.load_artifact(owner, "embedding", f"e5:{7:064x}") == b"x" * 64
        start = time.perf_counter()
        for n in range(200):
            assert tenant.load_artifact(other, "embedding", f"missing:{n}") is None
        miss_ms = (time.perf_counter() - start) / 200 * 1000
        assert tenant.load_artifact(other, "embedding", f"e5:{7:064x}") == b"x" * 64
        assert query(db, "SELECT COUNT(*) FROM artifacts WHERE session_id = ?", (other,)) == [(1,)]  # copied
        print(f"\n  an artifact miss among 3,000 rows: {miss_ms:.3f} ms")
        assert miss_ms < 50  # generous; a scan made it grow with the tenant's artifacts
    finally:
        store.close()


def text_file(text: str, name: str) -> dict:
    encoded = base64.b64encode(text.encode()).decode()
    return {"type": "file", "file": {"filename": name, "file_data": f"data:text/plain;base64,{encoded}"}}


def artifacts_of(db: str, data: str) -> int:
    digest = hashlib.sha256(data.encode()).hexdigest()
    return query(db, "SELECT COUNT(*) FROM artifacts WHERE key LIKE ?", (f"%:{digest}",))[0][0]


@pytest.mark.skipif(not installed("multilingual-e5-small"), reason="run `afm-local models install`")
def test_a_write_refused_by_the_quota_leaves_nothing_derived(spawn_server, tmp_path):
    """The room is checked before any artifact is made (``Sessions.append``), so a refused message leaves none;
    a restart keeps what a stored message sends (the repair of older leftovers: the test below)."""
    db = str(tmp_path / "orphans.db")
    args = ("--db", db, "--no-abstractive", "--quota-bytes", "3000")
    kept = "The deposit is due on 3 March. " * 40  # 1,240 bytes
    refused = "The hotel in Kyoto allows no pets. " * 55  # 1,925 bytes: past the quota with the first
    srv = spawn_server(*args, name="orphans")
    with httpx.Client(base_url=srv.url, timeout=120, trust_env=False) as client:
        sid = client.post("/v1/sessions").json()["id"]
        r = client.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": [text_file(kept, "a.txt")]})
        assert r.status_code == 201, r.text
        r = client.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": [text_file(refused, "b.txt")]})
        is_error(r, 413)
    assert artifacts_of(db, kept) > 0
    assert artifacts_of(db, refused) == 0  # refused before anything was derived from it
    srv.stop()
    srv = spawn_server(*args, name="orphans-again")
    with httpx.Client(base_url=srv.url, timeout=120, trust_env=False) as client:
        assert len(client.get(f"/v1/sessions/{sid}").json()["messages"]) == 1
    assert artifacts_of(db, refused) == 0
    assert artifacts_of(db, kept) > 0  # what a stored message sends is kept


def test_room_is_checked_before_anything_is_derived(tmp_path):
    """``check_room``: the quota asked before a message's artifacts are made (the append checks again)."""
    from afm_local.core.errors import QuotaExceeded
    from afm_local.core.turns import Turn
    from afm_local.server.store import Quota

    store = open_store(str(tmp_path / "room.db"), pool_size=1)
    try:
        tenant = store.tenant("t", Quota(bytes=100))
        sid = tenant.create_session()["id"]
        tenant.check_room([Turn("user", "x" * 60)])
        tenant.append_message(sid, "m1", "user", "x" * 60, None)
        with pytest.raises(QuotaExceeded):
            tenant.check_room([Turn("user", "y" * 50)])
        tenant.check_room([Turn("user", "y" * 40)])
        with pytest.raises(QuotaExceeded):  # two messages that fit one by one, not together
            tenant.check_room([Turn("user", "y" * 30), Turn("user", "z" * 30)])
        assert tenant.usage()["messages"] == 1
    finally:
        store.close()


def test_lookups_and_the_repair_on_both_stores(store_db):
    """On SQLite and PostgreSQL (row-level security on): a copy from another session, and the repair run
    when a process first opens the tenant, which deletes only the file artifacts no message sends."""
    from afm_local.core.parts import Attachment

    sent, refused = Attachment("file", b"a file a message sends"), Attachment("file", b"a file whose write failed")
    store = open_store(store_db, pool_size=1)
    try:
        tenant = store.tenant("t")
        sid, other = tenant.create_session()["id"], tenant.create_session()["id"]
        tenant.append_message(sid, "m1", "user", "see the file", None, [sent])
        for attachment in (sent, refused):
            tenant.save_artifact(sid, "document_text", f"media+x:y:{attachment.sha256}", b'"text"')
        tenant.save_artifact(sid, "embedding", "e5:" + "0" * 64, b"vector")  # a text's artifact: never swept
        assert tenant.load_artifact(other, "embedding", "e5:" + "0" * 64) == b"vector"  # copied across
        assert store.tenant("u").load_artifact(other, "embedding", "e5:" + "0" * 64) is None  # not another tenant's
    finally:
        store.close()
    store = open_store(store_db, pool_size=1)  # a new process's store: the tenant is swept when first opened
    try:
        tenant = store.tenant("t")
        assert tenant.load_artifact(sid, "document_text", f"media+x:y:{sent.sha256}") == b'"text"'
        assert tenant.load_artifact(sid, "document_text", f"media+x:y:{refused.sha256}") is None
        assert tenant.load_artifact(sid, "embedding", "e5:" + "0" * 64) == b"vector"
        assert tenant.sweep_orphans() == 0
    finally:
        store.close()
