"""Tenants end to end on SQLite and PostgreSQL: keys made with ``afm-local keys``, two tenants' requests
with each other's ids and guessed ones, rate limits, quotas and the access log. Real servers, real stores."""

from __future__ import annotations

import base64
import itertools
import secrets
import statistics
import subprocess
import sys
import time

import httpx
import pytest

from tests.support.servers import REPO, create_key

REQUESTS = 2000
SECRET = {"alice": "alice-secret-{}-Qx7", "bob": "bob-secret-{}-Vw3"}


def client(server, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60.0, trust_env=False)


@pytest.fixture(scope="module")
def two_tenants(module_store_db, spawn_module_server):
    """A server and two tenants, each with sessions and messages carrying its own secret words."""
    db = module_store_db
    keys = {t: create_key(db, t) for t in SECRET}
    server = spawn_module_server("--db", db, "--no-abstractive", "--rate-limit", "0", name="tenants")
    owned: dict[str, dict[str, list[str]]] = {}
    for tenant, key in keys.items():
        sessions, messages, files = [], [], []
        with client(server, key) as c:
            for i in range(3):
                sid = c.post("/v1/sessions").json()["id"]
                sessions.append(sid)
                for j in range(2):
                    said = f"[!] Remember {SECRET[tenant].format(f'{i}{j}')}."
                    r = c.post(
                        f"/v1/sessions/{sid}/messages",
                        json={"role": "user", "content": said if (i, j) != (0, 1) else document(tenant, said)},
                    )
                    assert r.status_code == 201, r.text
                    messages.append(r.json()["id"])
                    files += [a["sha256"] for a in r.json()["attachments"]]
        owned[tenant] = {"sessions": sessions, "messages": messages + files}
    yield server, keys, owned, db
    server.stop()


def document(tenant: str, said: str) -> list[dict]:
    """Content parts with a text file whose name and text carry the tenant's secret: an attachment of its own."""
    secret = SECRET[tenant].format("file")
    encoded = base64.b64encode(f"Notes. {said} The file secret is {secret}.".encode()).decode()
    return [
        {"type": "text", "text": said},
        {"type": "file", "file": {"filename": f"{secret}.txt", "file_data": f"data:text/plain;base64,{encoded}"}},
    ]


def probe(c: httpx.Client, kind: str, target: str) -> httpx.Response:
    if kind == "get":
        return c.get(f"/v1/sessions/{target}")
    if kind == "append":
        return c.post(f"/v1/sessions/{target}/messages", json={"role": "user", "content": "Is this mine?"})
    if kind == "context":
        return c.post(f"/v1/sessions/{target}/context", json={"query": "What do you remember?", "budget_tokens": 200})
    return c.delete(f"/v1/sessions/{target}")


def shape(r: httpx.Response) -> tuple[int, bytes, list[tuple[str, str]]]:
    """What a client can see of an answer, but for its date."""
    return r.status_code, r.content, sorted((k, v) for k, v in r.headers.items() if k != "date")


def test_no_tenant_reaches_another_tenants_data(two_tenants):
    """2,000 requests from each tenant with the other's session, message and attachment ids (a file's sha256)
    and with guessed ids:
    every one answers exactly like a missing session (status, body, headers), none carries the other's
    words, and the other's data is all there afterwards."""
    server, keys, owned, _ = two_tenants
    kinds = ("get", "append", "context", "delete")
    leaks, timings = [], {"theirs": [], "missing": []}
    for me, other in (("alice", "bob"), ("bob", "alice")):
        theirs = owned[other]["sessions"] + owned[other]["messages"]
        with client(server, keys[me]) as c:
            reference = {k: shape(probe(c, k, secrets.token_urlsafe(18))) for k in kinds}
            for n, kind in zip(range(REQUESTS), itertools.cycle(kinds)):
                if (n // len(kinds)) % 2:  # every kind in turn, alternately with theirs and with missing ids
                    which, target = "theirs", theirs[n % len(theirs)]
                else:
                    which, target = "missing", secrets.token_urlsafe(18) if n % 3 else f"guess-{n:020d}"
                start = time.perf_counter()
                r = probe(c, kind, target)
                if kind == "get":
                    timings[which].append(time.perf_counter() - start)
                if shape(r) != reference[kind] or SECRET[other].split("{")[0] in r.text:
                    leaks.append((me, kind, which, r.status_code, r.text[:200]))
            listed = c.get("/v1/sessions").text + c.get("/v1/tenant/export").text
            assert not any(sid in listed for sid in theirs) and SECRET[other].split("{")[0] not in listed
    print(
        f"\n{2 * REQUESTS} requests, {len(leaks)} leaks; GET median ms: other tenant's "
        f"{1000 * statistics.median(timings['theirs']):.2f}, missing {1000 * statistics.median(timings['missing']):.2f}"
    )
    assert leaks == []
    assert statistics.median(timings["theirs"]) < 2 * statistics.median(timings["missing"]) + 0.005
    for tenant, key in keys.items():  # the other's DELETEs erased nothing
        with client(server, key) as c:
            for sid in owned[tenant]["sessions"]:
                r = c.get(f"/v1/sessions/{sid}")
                assert r.status_code == 200 and len(r.json()["messages"]) == 2


def test_each_key_sees_its_tenant(two_tenants):
    server, keys, owned, _ = two_tenants
    for tenant, key in keys.items():
        with client(server, key) as c:
            info = c.get("/v1/tenant").json()
            assert info["tenant"] == tenant and info["key_id"] == key.split("_")[1]
            assert info["usage"]["sessions"] == 3 and info["usage"]["messages"] == 6
            assert {s["id"] for s in c.get("/v1/sessions").json()["sessions"]} == set(owned[tenant]["sessions"])
    with httpx.Client(base_url=server.url, trust_env=False) as anonymous:
        assert anonymous.get("/v1/sessions").status_code == 401
        assert (
            anonymous.get("/v1/sessions", headers={"Authorization": "Bearer afm_000000000000_" + "x" * 43}).status_code
            == 401
        )


def test_keys_are_listed_without_secrets_and_revoked(spawn_server, tmp_path):
    db = str(tmp_path / "keys.db")
    key = create_key(db, "carol")
    server = spawn_server("--db", db, "--no-abstractive", name="keys")
    with client(server, key) as c:
        assert c.get("/v1/tenant").status_code == 200
        listed = subprocess.run(
            [sys.executable, "-m", "afm_local", "keys", "list", "--db", db],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "carol" in listed and key.split("_")[1] in listed and key not in listed
        subprocess.run(
            [sys.executable, "-m", "afm_local", "keys", "revoke", "--tenant", "carol", "--db", db],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        deadline = time.monotonic() + 15  # a verified key is remembered for KEY_TTL_S (5 s)
        while c.get("/v1/tenant").status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert c.get("/v1/tenant").status_code == 401
    assert key not in server.log()
    bad = subprocess.run(
        [sys.executable, "-m", "afm_local", "keys", "create", "--tenant", "Not A Name", "--db", db],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "tenant names" in bad.stderr


def test_rate_limit_quotas_and_access_log(spawn_server, tmp_path):
    db = str(tmp_path / "limits.db")
    key = create_key(db, "dave")
    server = spawn_server(
        "--db",
        db,
        "--no-abstractive",
        "--rate-limit",
        "2",
        "--rate-burst",
        "6",
        "--quota-sessions",
        "1",
        "--quota-bytes",
        "40",
        name="limits",
    )
    with client(server, key) as c:
        sid = c.post("/v1/sessions").json()["id"]
        r = c.post("/v1/sessions")
        assert r.status_code == 413 and r.json()["error"]["type"] == "quota_exceeded"
        assert "--quota-sessions" in r.json()["error"]["message"]
        assert (
            c.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": "dave's note 1"}).status_code == 201
        )
        r = c.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": "x" * 40})
        assert r.status_code == 413 and "--quota-bytes" in r.json()["error"]["message"]
        attached = base64.b64encode(b"a small file of thirty bytes..").decode()  # 1 + 30 bytes fit alone: not with 13
        r = c.post(
            f"/v1/sessions/{sid}/messages",
            json={
                "role": "user",
                "content": [
                    {"type": "text", "text": "y"},
                    {"type": "file", "file": {"file_data": f"data:text/plain;base64,{attached}"}},
                ],
            },
        )
        assert r.status_code == 413 and "attachments included" in r.json()["error"]["message"]
        statuses = [c.get("/v1/tenant").status_code for _ in range(10)]
        assert 429 in statuses
        r = c.get("/v1/tenant")
        assert (
            r.status_code == 429 and r.json()["error"]["type"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
        )
    log = server.log()
    assert "tenant=dave key=" + key.split("_")[1] in log and "/v1/sessions/{session_id}/messages 201" in log
    assert key not in log and "dave's note" not in log and sid not in log
