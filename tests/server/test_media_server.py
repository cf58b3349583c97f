"""Images and documents through ``afm-local serve``: the session API, the store (SQLite and PostgreSQL),
the chat proxy with streaming, and every bad input's 4xx. Real server processes, real fixtures."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from afm_local.core.errors import QuotaExceeded
from afm_local.core.parts import Attachment
from afm_local.server.store import Quota, open_store
from afm_local.server.store.schema import MIGRATIONS, MIGRATIONS_TABLE, TYPES
from tests.server.test_server import AUTH, KEY, is_error
from tests.support.media import data, file_part, image_part, text
from tests.support.real import installed
from tests.support.stores import query

pytestmark = pytest.mark.skipif(not installed("multilingual-e5-small"), reason="run `afm-local models install`")

PRICING = [text("our pricing table screenshot"), image_part("png/pricing_en.png", "high")]
AGREEMENT = [text("and the agreement"), file_part("pdf/agreement_en.pdf")]
CHATTER = "Thanks, I have it. The Team plan looks like the best fit for a small company like yours."


@pytest.fixture(scope="module")
def server(spawn_module_server, tmp_path_factory):
    db = tmp_path_factory.mktemp("media") / "media.db"
    srv = spawn_module_server(
        "--db", str(db), "--api-key-env", "AFM_TEST_KEY", "--no-abstractive", env={"AFM_TEST_KEY": KEY}, name="media"
    )
    srv.db = str(db)
    return srv


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=120.0, trust_env=False) as c:
        yield c


def session_with_media(client: httpx.Client) -> str:
    sid = client.post("/v1/sessions").json()["id"]
    for role, content, importance in (
        ("user", PRICING, "RELEVANT"),
        ("assistant", CHATTER, None),
        ("user", AGREEMENT, None),
        ("assistant", "Noted, I will check it.", None),
    ):
        body = {"role": role, "content": content, **({"importance": importance} if importance else {})}
        r = client.post(f"/v1/sessions/{sid}/messages", json=body)
        assert r.status_code == 201, r.text
    return sid


def test_an_image_and_a_pdf_travel_through_a_session_and_come_back_at_each_tier(client):
    sid = session_with_media(client)
    messages = client.get(f"/v1/sessions/{sid}").json()["messages"]
    image, pdf = messages[0]["attachments"][0], messages[2]["attachments"][0]
    assert messages[0]["content"] == "our pricing table screenshot"  # the caption; the bytes are not echoed
    assert (image["kind"], image["mime"], image["width"], image["height"], image["tokens_full"]) == (
        "image",
        "image/png",
        900,
        339,
        425,
    )
    assert image["thumbnail"].startswith("data:image/jpeg;base64,") and image["tokens_thumbnail"] == 85
    assert (pdf["kind"], pdf["pages"], pdf["name"]) == ("pdf", 3, "agreement_en.pdf")
    assert messages[2]["importance"] == "CRITICAL"  # a deadline and a budget cap, read from the PDF's text

    forms = {}
    for budget in range(380, 1200, 20):
        # a question the pricing table does not answer: relevance lets it shrink to its line at small budgets
        ctx = client.post(
            f"/v1/sessions/{sid}/context", json={"query": "When is the report due?", "budget_tokens": budget}
        ).json()
        assert ctx["tokens_used"] <= budget
        item = ctx["items"][0]
        forms.setdefault(item["fidelity"], (ctx, item))
    assert {"full", "compressed", "placeholder"} <= set(forms), set(forms)
    full = forms["full"][0]["messages"][0]["content"]
    assert base64.b64decode(full[1]["image_url"]["url"].split(",", 1)[1]) == data("png/pricing_en.png")
    thumb = forms["compressed"][0]["messages"][0]["content"][1]["image_url"]
    assert thumb["detail"] == "low" and thumb["url"] == image["thumbnail"]
    assert forms["placeholder"][1]["attachments"][0]["sent"] == "named"
    assert forms["full"][0]["items"][2]["fidelity"] == "full"  # the binding agreement arrives whole
    structured = client.post(
        f"/v1/sessions/{sid}/context", json={"query": "Deadline?", "budget_tokens": 1500, "render": "structured"}
    ).json()
    assert "[document 1: agreement_en.pdf, 3 pages]" in structured["messages"][0]["content"]


def bad_parts() -> list[tuple[str, list, int, str]]:
    return [
        ("encrypted PDF", [file_part("bad/encrypted.pdf")], 422, "encrypted"),
        ("truncated PDF", [file_part("bad/truncated.pdf")], 422, "corrupt or not a PDF"),
        ("empty file", [{"type": "file", "file": {"file_data": "data:application/pdf;base64,"}}], 422, "empty"),
        ("text sent as an image", [image_part("bad/not_really.png")], 415, "holds text, not a PNG"),
        (
            "binary junk",
            [{"type": "file", "file": {"file_data": base64.b64encode(b"\x00\x01\xff" * 50).decode()}}],
            415,
            "not a PNG, JPEG, WebP or GIF image, a PDF, or UTF-8 text",
        ),
        ("decompression bomb", [image_part("bad/bomb_40000x40000.png")], 413, "pixels"),
        ("144 megapixels", [image_part("bad/bomb_12000x12000.png")], 413, "the limit is 40,000,000"),
        ("not base64", [{"type": "image_url", "image_url": {"url": "data:image/png;base64,%%%"}}], 422, "base64"),
        ("file by id", [{"type": "file", "file": {"file_id": "file-1"}}], 422, "file_id"),
        ("audio", [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}], 422, "unsupported type"),
        ("too many parts", [text("x")] * 65, 422, "at most 64"),
        ("17 attachments", [image_part("photo/coffee.jpg")] * 17, 413, "the limit is 16"),
        (
            "an 11 MiB file",
            [{"type": "file", "file": {"file_data": base64.b64encode(b"a" * (11 << 20)).decode()}}],
            413,
            "the limit is 10,485,760",
        ),
    ]


def test_every_bad_input_gets_its_4xx_and_nothing_is_stored(client, server):
    sid = client.post("/v1/sessions").json()["id"]
    files_before = query(server.db, "SELECT COUNT(*) FROM attachments")
    for name, parts, status, message in bad_parts():
        r = client.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": [text("see"), *parts]})
        error = is_error(r, status)
        assert message in error["message"] and "\n" not in error["message"], (name, error)
        r = client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": [text("see"), *parts]}, {"role": "user", "content": "q"}]},
        )
        assert message in is_error(r, status)["message"], name
    assert client.get(f"/v1/sessions/{sid}").json()["messages"] == []
    assert query(server.db, "SELECT COUNT(*) FROM attachments") == files_before
    assert query(server.db, "SELECT COUNT(*) FROM messages WHERE session_id = ?", (sid,)) == [(0,)]


def test_attachments_are_stored_once_survive_a_restart_and_go_with_their_session(store_db, spawn_server):
    srv = spawn_server("--db", store_db, "--no-abstractive", name="media-store")
    with httpx.Client(base_url=srv.url, timeout=120, trust_env=False) as c:
        sids = [c.post("/v1/sessions").json()["id"] for _ in range(2)]
        for sid in sids:  # the same screenshot in two sessions
            assert c.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": PRICING}).status_code == 201
        assert query(store_db, "SELECT COUNT(*) FROM attachments") == [(1,)]
        srv.kill()
        srv.start()
        restored = c.get(f"/v1/sessions/{sids[0]}").json()["messages"][0]["attachments"][0]
        assert restored["width"] == 900 and restored["thumbnail"].startswith("data:image/jpeg")
        assert c.delete(f"/v1/sessions/{sids[0]}").status_code == 200
        assert query(store_db, "SELECT COUNT(*) FROM attachments") == [(1,)]  # the other session still sends it
        assert c.delete(f"/v1/sessions/{sids[1]}").status_code == 200
        assert query(store_db, "SELECT COUNT(*) FROM attachments") == [(0,)]
        assert query(store_db, "SELECT COUNT(*) FROM message_attachments") == [(0,)]


def test_the_store_gives_attachments_back_in_order(store_db):
    opened = open_store(store_db)
    store = opened.tenant("default")
    try:
        sid = store.create_session()["id"]
        parts = (
            Attachment("image_url", data("photo/coffee.jpg"), detail="low"),
            Attachment("image_url", url="https://example.org/a.png", filename="a.png"),
            Attachment("file", data("pdf/agreement_ru.pdf"), filename="договор.pdf"),
        )
        store.append_message(sid, "m1", "user", "three parts", None, parts)
        store.append_message(sid, "m2", "assistant", "no parts", None)
        count, rows = store.messages_since(sid)  # type: ignore[misc]
        assert count == 2 and rows[0]["attachments"] == parts and rows[1]["attachments"] == ()
        assert store.messages_since(sid, 1)[1][0]["attachments"] == ()  # type: ignore[index]
    finally:
        opened.close()


def test_attachments_belong_to_their_tenant_count_in_its_quota_and_go_with_its_erasure(store_db):
    """The same file sent by two tenants is two rows, one each: neither reads, erases or keeps the other's; a
    message's attachment bytes count in the tenant's byte quota."""
    opened = open_store(store_db)
    alice, bob = opened.tenant("alice"), opened.tenant("bob", Quota(bytes=len(data("photo/coffee.jpg")) + 10))
    coffee = Attachment("image_url", data("photo/coffee.jpg"))
    try:
        mine, theirs = alice.create_session()["id"], bob.create_session()["id"]
        alice.append_message(mine, "a1", "user", "a photo", None, (coffee,))
        alice.append_message(alice.create_session()["id"], "a2", "user", "the same photo", None, (coffee,))
        bob.append_message(theirs, "b1", "user", "a photo", None, (coffee,))
        assert sorted(query(store_db, "SELECT tenant_id, sha256 FROM attachments")) == [
            ("alice", coffee.sha256),
            ("bob", coffee.sha256),
        ]
        assert bob.messages_since(mine) is None and not bob.erase_session(mine)
        with pytest.raises(QuotaExceeded, match="attachments included.*--quota-bytes"):
            bob.append_message(theirs, "b2", "user", "again", None, (coffee,))
        assert bob.usage()["bytes"] == len("a photo") + len(coffee.data)
        assert alice.erase_session(mine)  # alice's other session still sends the photo
        assert query(store_db, "SELECT COUNT(*) FROM attachments WHERE tenant_id = 'alice'") == [(1,)]
        assert alice.erase() == 1
        assert query(store_db, "SELECT tenant_id, COUNT(*) FROM attachments GROUP BY tenant_id") == [("bob", 1)]
        assert query(store_db, "SELECT tenant_id, COUNT(*) FROM message_attachments GROUP BY tenant_id") == [("bob", 1)]
        assert bob.messages_since(theirs)[1][0]["attachments"] == (coffee,)  # type: ignore[index]
    finally:
        opened.close()


def test_a_database_at_the_schema_before_tenants_migrates_with_its_messages(tmp_path):
    """A store written before tenants and attachments (migrations m001 to m003) opens: its messages are the
    default tenant's, with no attachments, and it takes new ones."""
    db = str(tmp_path / "before.db")
    conn = sqlite3.connect(db)
    conn.execute(MIGRATIONS_TABLE.format(**TYPES["sqlite"]))
    for migration in MIGRATIONS[:3]:
        for statement in migration.statements("sqlite"):
            conn.execute(statement)
        conn.execute("INSERT INTO _migrations (name, applied) VALUES (?, 0)", (migration.name,))
    conn.execute("INSERT INTO sessions (id, created, next_seq) VALUES ('old-session-00000000', 1.0, 1)")
    conn.execute("INSERT INTO messages VALUES ('old-session-00000000', 0, 'a', 'user', 'before', NULL, 1.0)")
    conn.commit()
    conn.close()
    opened = open_store(db)
    store = opened.tenant("default")
    try:
        store.append_message(
            "old-session-00000000", "b", "user", "a photo", None, (Attachment("image_url", data("photo/coffee.jpg")),)
        )
        count, rows = store.messages_since("old-session-00000000")  # type: ignore[misc]
        assert count == 2 and [len(r["attachments"]) for r in rows] == [0, 1]
    finally:
        opened.close()
    applied = [name for (name,) in query(db, "SELECT name FROM _migrations ORDER BY name")]
    assert applied == sorted(m.name for m in MIGRATIONS) and "m006_attachments" in applied


def test_postgres_row_level_security_holds_for_attachments(pg_db):
    """The database itself keeps a tenant's files and parts from another: the same policy as every tenant table."""
    import psycopg

    opened = open_store(pg_db)
    alice = opened.tenant("alice")
    sid = alice.create_session()["id"]
    alice.append_message(sid, "m1", "user", "a photo", None, (Attachment("image_url", data("photo/coffee.jpg")),))
    opened.close()
    with psycopg.connect(pg_db) as conn:
        conn.execute("SET ROLE afm_local_tenant")
        conn.execute("SELECT set_config('app.tenant', 'bob', false)")
        assert conn.execute("SELECT COUNT(*) FROM attachments").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM message_attachments").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO attachments (tenant_id, sha256, data) VALUES ('alice', 'x', '')")
        conn.rollback()
        conn.execute("SET ROLE afm_local_tenant")
        conn.execute("SELECT set_config('app.tenant', 'alice', false)")
        assert conn.execute("SELECT COUNT(*) FROM attachments").fetchone() == (1,)


class Recorder(BaseHTTPRequestHandler):
    """An OpenAI-compatible upstream on loopback that records what it is sent and streams a short answer."""

    bodies: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Recorder.bodies.append(body)
        chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "ok"}}]}
        payload = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


def test_the_proxy_streams_images_and_documents_at_each_tier(spawn_server, tmp_path):
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        front = spawn_server(
            "--db",
            str(tmp_path / "front.db"),
            "--upstream",
            f"http://127.0.0.1:{upstream.server_port}",
            "--no-abstractive",
            name="media-front",
        )
        history = [
            {"role": "user", "content": PRICING},
            {"role": "assistant", "content": CHATTER},
            {"role": "user", "content": AGREEMENT},
            {"role": "assistant", "content": "Noted."},
        ]
        query_parts = [text("Is this receipt within the cap?"), image_part("png/receipt_en.png", "low")]
        seen = {}
        with httpx.Client(base_url=front.url, timeout=120, trust_env=False) as c:
            for budget in range(380, 1200, 40):
                body = {
                    "model": "gpt-4o",
                    "stream": True,
                    "afm": {"budget_tokens": budget},
                    "messages": [*history, {"role": "user", "content": query_parts}],
                }
                with c.stream("POST", "/v1/chat/completions", json=body) as r:
                    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
                    assert int(r.headers["X-AFM-Tokens-Used"]) <= budget
                    assert [line for line in r.iter_lines() if line][-1] == "data: [DONE]"
                sent = Recorder.bodies[-1]["messages"]
                assert sent[-1] == {"role": "user", "content": query_parts}  # the query's own parts, as sent
                first = sent[0]["content"]
                kind = (
                    "placeholder"
                    if isinstance(first, str)
                    else "compressed"
                    if first[1]["image_url"]["url"].startswith("data:image/jpeg")
                    else "full"
                )
                seen.setdefault(kind, sent)
        assert {"full", "compressed", "placeholder"} <= set(seen), set(seen)
        assert seen["full"][0]["content"][1]["image_url"]["detail"] == "high"
        assert (
            "15" in seen["full"][2]["content"] and "EUR 48,000" in seen["full"][2]["content"]
        )  # the agreement, as text
    finally:
        upstream.shutdown()


def test_a_nul_in_a_file_name_is_a_clear_refusal_or_stored(store_db):
    """Found by the fuzz test: PostgreSQL text cannot hold NUL, and the driver's refusal was a 500. It is an
    ``InvalidInput`` (422) naming the fix there, with nothing stored; SQLite stores the name as given."""
    from afm_local.core.errors import InvalidInput
    from afm_local.core.parts import Attachment
    from afm_local.server.store import is_postgres_url

    store = open_store(store_db, pool_size=1)
    try:
        tenant = store.tenant("t")
        sid = tenant.create_session()["id"]
        named = Attachment("file", b"notes", filename="a\x00b.txt")
        if is_postgres_url(store_db):
            with pytest.raises(InvalidInput, match="NUL"):
                tenant.append_message(sid, "m1", "user", "my notes", None, [named])
            assert tenant.messages_since(sid, 0)[1] == []
        else:
            tenant.append_message(sid, "m1", "user", "my notes", None, [named])
            assert tenant.messages_since(sid, 0)[1][0]["attachments"][0].filename == "a\x00b.txt"
    finally:
        store.close()
