"""Erasure reaches the bytes, export returns everything, and an encrypted store holds no clear text.

Unique marker words are written through a real server, then searched for in every file the service
wrote (SQLite: the folder with the database, its WAL, its shared memory and the server's log;
PostgreSQL: every data file of the cluster after a checkpoint, the WAL after the operator's steps of
docs/server.md, and the server's log) after erasing a session and after erasing a tenant."""

from __future__ import annotations

import base64
import io
import json
import re
import secrets
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from PIL import Image, ImageDraw, ImageFont

from afm_local.local.components import media_reader
from afm_local.server.schemas import AttachmentOut
from tests.support.servers import REPO, create_key


def marker(name: str) -> str:
    return f"zq{name}{secrets.token_hex(6)}"


def hits(folders: list[Path], words: list[str]) -> dict[str, int]:
    """How often each word occurs in every file under ``folders`` (bytes, as written: UTF-8, or escaped
    as JSON writes a non-ASCII word, which OCR makes of a marker when it reads Latin letters as Cyrillic)."""
    found = dict.fromkeys(words, 0)
    forms = {word: {word.encode(), json.dumps(word)[1:-1].encode()} for word in words}
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                for word in words:
                    found[word] += sum(data.count(form) for form in forms[word])
    return found


def write(c: httpx.Client, words: list[str]) -> tuple[str, list[str]]:
    """A session whose messages carry ``words`` (tagged, long and short ones); its id and the contents."""
    sid = c.post("/v1/sessions").json()["id"]
    contents = []
    for i, word in enumerate(words):
        for text in (
            f"[!] Never share {word}: it is my account number and it must stay private, whatever happens "
            f"and whoever asks, because the bank said so twice.",
            f"Note {i}: the hotel booking mentions {word} again.",
        ):
            r = c.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": text})
            assert r.status_code == 201, r.text
            contents.append(text)
    r = c.post(f"/v1/sessions/{sid}/context", json={"query": f"What about {words[0]}?", "budget_tokens": 120})
    assert r.status_code == 200
    return sid, contents


@pytest.fixture(params=["sqlite", "postgresql"])
def store_and_files(request, tmp_path):
    """``--db`` and a function that returns the folders holding every byte the store wrote, flushed."""
    if request.param == "sqlite":
        return str(tmp_path / "erase.db"), lambda: [tmp_path]
    cluster = request.getfixturevalue("pg_cluster")
    db = cluster.create_database()

    def flushed() -> list[Path]:
        with cluster.admin() as conn:
            conn.execute("CHECKPOINT")
        return [cluster.data / "base", cluster.data / "global", tmp_path]

    return db, flushed


def test_erasure_leaves_no_byte_and_export_returns_everything(store_and_files, spawn_server):
    db, files = store_and_files
    keys = {t: create_key(db, t) for t in ("alice", "bob")}
    server = spawn_server("--db", db, "--no-abstractive", "--rate-limit", "0", name="erase")
    words = {"s1": [marker("a"), marker("b")], "s2": [marker("c")], "bob": [marker("d")]}
    every = [w for ws in words.values() for w in ws]
    alice = httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {keys['alice']}"}, timeout=60, trust_env=False
    )
    bob = httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {keys['bob']}"}, timeout=60, trust_env=False
    )
    with alice, bob:
        s1, written1 = write(alice, words["s1"])
        s2, written2 = write(alice, words["s2"])
        write(bob, words["bob"])
        exported = alice.get("/v1/tenant/export").json()
        by_session = {s["id"]: [m["content"] for m in s["messages"]] for s in exported["sessions"]}
        assert exported["tenant"] == "alice" and by_session == {s1: written1, s2: written2}
        assert all(
            m["importance"] == "CRITICAL" and m["tag"] == "CRITICAL"
            for s in exported["sessions"]
            for m in s["messages"][::2]
        )
        before = hits(files(), every)
        assert all(before[w] > 0 for w in every), before  # the search finds what is there

        assert alice.delete(f"/v1/sessions/{s1}").json() == {"id": s1, "deleted": True}
        after_session = hits(files(), every)
        assert [after_session[w] for w in words["s1"]] == [0, 0], after_session
        assert all(after_session[w] > 0 for w in words["s2"] + words["bob"]), after_session
        assert alice.get(f"/v1/sessions/{s1}").status_code == 404

        assert alice.delete("/v1/tenant").json() == {"tenant": "alice", "sessions_erased": 1}
        after_tenant = hits(files(), every)
        assert [after_tenant[w] for w in words["s1"] + words["s2"]] == [0, 0, 0], after_tenant
        assert after_tenant[words["bob"][0]] > 0
        assert (
            alice.get("/v1/tenant/export").json()["sessions"] == []
            and len(bob.get("/v1/sessions").json()["sessions"]) == 1
        )
    print(f"\nmarker hits before / after the session / after the tenant: {before} {after_session} {after_tenant}")


def screenshot(words: str) -> dict:
    """An image part: a PNG with ``words`` drawn large (what OCR reads; the PNG's bytes do not spell them)."""
    image = Image.new("RGB", (1400, 200), "white")
    ImageDraw.Draw(image).text((40, 60), words, fill="black", font=ImageFont.load_default(size=40))
    out = io.BytesIO()
    image.save(out, "PNG")
    return {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()},
    }


def notes(name: str, words: str) -> dict:
    """A file part: a plain-text document called ``name`` that says ``words``."""
    encoded = base64.b64encode(words.encode()).decode()
    return {"type": "file", "file": {"filename": name, "file_data": f"data:text/plain;base64,{encoded}"}}


def write_media(c: httpx.Client, shot: str, doc: str, name: str) -> tuple[str, str]:
    """A session with a screenshot saying ``shot`` and a document called ``name`` saying ``doc``; its id and
    ``shot`` as OCR read it (the Full form sends the OCR text: a misread letter makes another unique word)."""
    sid = c.post("/v1/sessions").json()["id"]
    content = [
        {"type": "text", "text": "[!] my private papers"},
        screenshot(f"Account code {shot} is private."),
        notes(f"{name}.txt", f"Minutes: the code word is {doc}. The budget is capped at EUR 48,000."),
    ]
    r = c.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": content})
    assert r.status_code == 201, r.text
    r = c.post(f"/v1/sessions/{sid}/context", json={"query": "What is the code word?", "budget_tokens": 3000})
    assert r.status_code == 200 and r.json()["items"][0]["fidelity"] == "full"
    # OCR has read the word before "private" ("is") as "1$", and a marker as two words: the marker is what
    # stands between "Account code" and the word before "private"
    read = re.search(r"Account code (.+?)\s+\S+\s+private", json.dumps(r.json()["messages"], ensure_ascii=False))
    assert read is not None and len(read[1]) >= len(shot) - 2, r.text
    return sid, read[1]


def test_erasure_reaches_attachments_their_text_and_their_names(store_and_files, spawn_server):
    """A screenshot's OCR text, a document's text and a file name, each a unique marker: export lists the
    attachments' metadata without their bytes; after erasing the session, then the tenant, no file the
    service wrote holds the erased markers, and the other tenant's are still there."""
    if not media_reader().reads_text:
        pytest.skip("Tesseract data not installed: apt-get install tesseract-ocr-eng tesseract-ocr-rus")
    db, files = store_and_files
    keys = {t: create_key(db, t) for t in ("alice", "bob")}
    server = spawn_server("--db", db, "--no-abstractive", "--rate-limit", "0", name="erase-media")
    words = {s: [marker("o"), marker("d"), marker("n")] for s in ("s1", "s2", "bob")}
    alice, bob = (
        httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {keys[t]}"}, timeout=120, trust_env=False)
        for t in ("alice", "bob")
    )
    with alice, bob:
        sessions = {}
        for owner, c in (("s1", alice), ("s2", alice), ("bob", bob)):
            sessions[owner], words[owner][0] = write_media(c, *words[owner])
        every = [w for ws in words.values() for w in ws]
        exported = alice.get("/v1/tenant/export")
        attachments = {
            s["id"]: [a["name"] for m in s["messages"] for a in m["attachments"]] for s in exported.json()["sessions"]
        }
        assert attachments == {sessions[s]: ["image", f"{words[s][2]}.txt"] for s in ("s1", "s2")}
        listed = [a for s in exported.json()["sessions"] for m in s["messages"] for a in m["attachments"]]
        assert all(set(a) == set(AttachmentOut.model_fields) for a in listed)  # metadata, not the bytes
        assert base64.b64encode(b"Minutes: the code").decode() not in exported.text
        before = hits(files(), every)
        assert all(before[w] > 0 for w in every), before  # the search finds what is there, OCR text included

        assert alice.delete(f"/v1/sessions/{sessions['s1']}").status_code == 200
        after_session = hits(files(), every)
        assert [after_session[w] for w in words["s1"]] == [0, 0, 0], after_session
        assert all(after_session[w] > 0 for w in words["s2"] + words["bob"]), after_session

        assert alice.delete("/v1/tenant").json() == {"tenant": "alice", "sessions_erased": 1}
        after_tenant = hits(files(), every)
        assert [after_tenant[w] for w in words["s1"] + words["s2"]] == [0] * 6, after_tenant
        assert all(after_tenant[w] > 0 for w in words["bob"]), after_tenant
    print(
        f"\nattachment marker hits before / after the session / after the tenant: {before} {after_session} "
        f"{after_tenant}"
    )


def test_postgres_wal_keeps_erased_words_until_the_operator_recycles_it(pg_cluster, spawn_server):
    """What PostgreSQL cannot promise by itself, and what the operator does about it (docs/server.md)."""
    db = pg_cluster.create_database()
    key = create_key(db, "erin")
    server = spawn_server("--db", db, "--no-abstractive", name="erase-wal")
    word = marker("w")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60, trust_env=False
    ) as c:
        write(c, [word])
        assert c.delete("/v1/tenant").status_code == 200
    wal = pg_cluster.data / "pg_wal"
    assert hits([wal], [word])[word] > 0  # the WAL still holds what was written
    with pg_cluster.admin() as conn:
        conn.execute("ALTER SYSTEM SET wal_recycle = off")
        conn.execute("SELECT pg_reload_conf()")
        for _ in range(2):
            conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")
    assert hits([wal, pg_cluster.data / "base"], [word])[word] == 0


def test_encrypted_store_holds_no_clear_text_and_a_wrong_key_is_one_line(spawn_server, tmp_path):
    pytest.importorskip("sqlcipher3", reason="the encryption extra is not installed (scripts/setup.sh dev)")
    db = str(tmp_path / "secret.db")
    env = {"AFM_DB_KEY": "correct horse battery staple"}
    key = create_key(db, "frank", env, "--db-key-env", "AFM_DB_KEY")
    server = spawn_server("--db", db, "--db-key-env", "AFM_DB_KEY", "--no-abstractive", env=env, name="encrypted")
    word = marker("e")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60, trust_env=False
    ) as c:
        sid, written = write(c, [word])
        assert [m["content"] for m in c.get(f"/v1/sessions/{sid}").json()["messages"]] == written
    server.stop()
    assert hits([tmp_path], [word])[word] == 0 and Path(db).read_bytes()[:16] != b"SQLite format 3\x00"
    for extra, wanted in ((["--db-key-env", "AFM_DB_KEY"], "wrong key"), ([], "--db-key-env")):
        done = subprocess.run(
            [sys.executable, "-m", "afm_local", "serve", "--db", db, "--port", "9", *extra],
            cwd=REPO,
            env={**__import__("os").environ, "AFM_DB_KEY": "not the key"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and wanted in lines[0], done.stderr
