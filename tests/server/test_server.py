"""``afm-local serve`` end to end: real server processes on loopback, real SQLite, no mocks."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import time

import httpx
import pytest

from tests import THREAD_ENV
from tests.support.servers import REPO, metric

KEY = "test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
GGUF = REPO / "models" / "gguf" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
GGUF_SMALL = REPO / "models" / "gguf" / "SmolLM2-135M-Instruct.Q4_1.gguf"

HISTORY = [
    ("user", "[!] My son is allergic to peanuts: no dish may contain peanuts or peanut oil, ever."),
    ("assistant", "Understood. I will never suggest anything with peanuts or peanut oil."),
    ("user", "We land in Lisbon on 14 May at 09:40 and stay at a small hotel in Alfama for five nights."),
    ("assistant", "Alfama is lovely: steep cobbled streets, fado bars and the castle of São Jorge right above it."),
    ("user", "By the way, the weather app says it will be sunny and around 23 degrees most of the week."),
    ("assistant", "Great weather for walking. Bring comfortable shoes, a hat and sunscreen for the viewpoints."),
    ("user", "My wife wants one day trip to Sintra; we have no car and would like to avoid long queues."),
    ("assistant", "Take the early train from Rossio, buy palace tickets online, and start with Pena before 10:00."),
    ("user", "lol ok thanks"),
    ("assistant", "You're welcome! Anything else about the trip?"),
]


def is_error(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and body["error"]["type"] and body["error"]["message"], body
    assert "Traceback" not in response.text
    return body["error"]


@pytest.fixture(scope="module")
def server(spawn_module_server, tmp_path_factory):
    db = tmp_path_factory.mktemp("api") / "api.db"
    # --no-abstractive: these tests count cache misses, which background topic jobs would add to.
    return spawn_module_server(
        "--db",
        str(db),
        "--api-key-env",
        "AFM_TEST_KEY",
        "--budget",
        "300",
        "--no-abstractive",
        env={"AFM_TEST_KEY": KEY},
        name="api",
    )


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=60.0, trust_env=False) as c:
        yield c


def new_session(client: httpx.Client, history=HISTORY) -> str:
    r = client.post("/v1/sessions")
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    for role, content in history:
        r = client.post(f"/v1/sessions/{sid}/messages", json={"role": role, "content": content})
        assert r.status_code == 201, r.text
    return sid


# ------------------------------------------------------------------------------------------ endpoints


def test_healthz_needs_no_key(server):
    r = httpx.get(server.url + "/healthz", trust_env=False)
    assert r.status_code == 200 and r.json()["status"] == "ok"


def test_session_lifecycle(client):
    r = client.post("/v1/sessions")
    assert r.status_code == 201
    sid = r.json()["id"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{16,64}", sid)

    r = client.post(
        f"/v1/sessions/{sid}/messages", json={"role": "user", "content": "[!] Never book flights before 08:00."}
    )
    assert r.status_code == 201
    first = r.json()
    assert first["importance"] == "CRITICAL" and first["seq"] == 0 and first["tokens_full"] > 0
    r = client.post(
        f"/v1/sessions/{sid}/messages",
        json={"role": "assistant", "content": "Sure, I will only look at later flights.", "importance": "trivial"},
    )
    assert r.status_code == 201
    second = r.json()
    assert second["importance"] == "TRIVIAL" and second["importance_override"] == "TRIVIAL" and second["seq"] == 1
    r = client.post(f"/v1/sessions/{sid}/messages", json={"role": "tool", "content": "flights: LIS 09:40, LIS 13:15"})
    assert r.status_code == 201 and r.json()["importance"] in ("CRITICAL", "RELEVANT", "TRIVIAL")

    r = client.get(f"/v1/sessions/{sid}")
    assert r.status_code == 200
    got = r.json()
    assert got["id"] == sid and [m["id"] for m in got["messages"]][:2] == [first["id"], second["id"]]
    for m in got["messages"]:
        assert {
            "importance",
            "tokens_full",
            "tokens_compressed",
            "tokens_placeholder",
            "role",
            "content",
            "seq",
        } <= set(m)

    r = client.post(
        f"/v1/sessions/{sid}/context",
        json={
            "query": "Which flight should we take?",
            "budget_tokens": 60,
            "system_preamble": "You are a travel agent.",
            "render": "chat",
        },
    )
    assert r.status_code == 200, r.text
    ctx = r.json()
    assert set(ctx) == {
        "messages",
        "items",
        "tokens_used",
        "budget_tokens",
        "render",
        "packing",
        "language",
        "fidelity_counts",
        "query_index",
    }
    assert ctx["tokens_used"] <= 60 and len(ctx["items"]) == 3
    assert ctx["items"][0]["fidelity"] == "full"  # CRITICAL survives
    assert int(r.headers["X-AFM-Tokens-Used"]) == ctx["tokens_used"]
    assert r.headers["X-AFM-Fidelity"] == ",".join(
        f"{k}={ctx['fidelity_counts'][k]}" for k in ("full", "compressed", "placeholder", "dropped")
    )

    r = client.post(
        f"/v1/sessions/{sid}/context",
        json={"query": "q", "budget_tokens": 200, "render": "structured", "packing": "paper"},
    )
    assert r.status_code == 200 and r.json()["render"] == "structured" and r.json()["packing"] == "paper"

    assert any(s["id"] == sid for s in client.get("/v1/sessions").json()["sessions"])
    r = client.delete(f"/v1/sessions/{sid}")
    assert r.status_code == 200 and r.json()["deleted"] is True
    is_error(client.get(f"/v1/sessions/{sid}"), 404)
    is_error(client.delete(f"/v1/sessions/{sid}"), 404)
    is_error(client.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": "x"}), 404)


def test_budget_packs_long_history(client):
    sid = new_session(client)
    r = client.post(
        f"/v1/sessions/{sid}/context", json={"query": "What can my son eat for dinner tonight?", "budget_tokens": 120}
    )
    assert r.status_code == 200, r.text
    ctx = r.json()
    assert ctx["tokens_used"] <= 120
    assert ctx["items"][0]["fidelity"] == "full" and ctx["items"][0]["importance"] == "CRITICAL"
    assert ctx["fidelity_counts"]["full"] < len(HISTORY)  # something had to give
    assert int(r.headers["X-AFM-Tokens-Saved"]) > 0


def test_stateless_context_and_repeat_costs_nothing(client):
    body = {
        "messages": [{"role": r, "content": c} for r, c in HISTORY],
        "query": "Sintra tickets?",
        "budget_tokens": 150,
    }
    r = client.post("/v1/context", json=body)
    assert r.status_code == 200, r.text
    first = r.json()
    assert first["tokens_used"] <= 150 and len(first["items"]) == len(HISTORY)
    misses = metric(client.get("/metrics").text, "afm_cache_misses_total", cache="stateless")
    r = client.post("/v1/context", json=body)
    assert r.status_code == 200 and r.json() == first
    assert metric(client.get("/metrics").text, "afm_cache_misses_total", cache="stateless") == misses


def test_openapi_and_metrics(client, server):
    spec = client.get("/openapi.json").json()
    for path in (
        "/v1/sessions",
        "/v1/sessions/{session_id}",
        "/v1/sessions/{session_id}/messages",
        "/v1/sessions/{session_id}/context",
        "/v1/context",
        "/v1/chat/completions",
        "/healthz",
        "/metrics",
    ):
        assert path in spec["paths"], path
    text, parts = spec["components"]["schemas"]["MessageIn"]["properties"]["content"]["anyOf"]
    assert text["maxLength"] == 64 * 1024 and parts["type"] == "array"
    is_error(httpx.get(server.url + "/openapi.json", trust_env=False), 401)  # the spec needs the key too
    assert httpx.get(server.url + "/docs", headers=AUTH, trust_env=False).status_code == 404  # no CDN-backed UI

    text = client.get("/metrics").text
    assert metric(text, "afm_http_requests_total", route="/healthz", method="GET", status="200") >= 1
    assert metric(text, "afm_http_requests_total", route="/v1/sessions", method="POST", status="201") >= 1
    assert "afm_http_request_duration_seconds_bucket" in text
    assert "afm_cache_hits_total" in text and "afm_cache_misses_total" in text
    assert "afm_tokens_saved_total" in text


def test_inspector_page_is_self_contained(server):
    r = httpx.get(server.url + "/", trust_env=False)  # static, no data: served without the key
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "connect-src 'self'" in r.headers["content-security-policy"]
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", r.text)
    assert "fetch(" in r.text and "Authorization" in r.text


# ------------------------------------------------------------------------------------------ hostile input


def _chunks(total: int, size: int = 64 * 1024):
    sent = 0
    while sent < total:
        yield b"x" * min(size, total - sent)
        sent += size


def test_hostile_inputs_get_clear_4xx(client, server):
    sid = new_session(client, HISTORY[:2])
    url = f"/v1/sessions/{sid}"
    json_headers = {**AUTH, "Content-Type": "application/json"}
    cases = [
        (
            "malformed json",
            lambda: client.post(url + "/messages", content=b'{"role": "user", "content": ', headers=json_headers),
            400,
            "invalid_json",
        ),
        (
            "not an object",
            lambda: client.post(url + "/messages", content=b"[1, 2, 3]", headers=json_headers),
            422,
            "invalid_request",
        ),
        (
            "20 MB body",
            lambda: client.post("/v1/context", content=b"x" * (20 << 20), headers=json_headers),
            413,
            "request_too_large",
        ),
        (
            "17 MB chunked body, no length",
            lambda: client.post("/v1/context", content=_chunks(17 << 20), headers=json_headers),
            413,
            "request_too_large",
        ),
        (
            "invalid utf-8",
            lambda: client.post(
                url + "/messages", content=b'{"role": "user", "content": "\xff\xfe\xc3("}', headers=json_headers
            ),
            400,
            "invalid_utf8",
        ),
        (
            "huge budget",
            lambda: client.post(url + "/context", json={"query": "q", "budget_tokens": 10**12}),
            422,
            "invalid_request",
        ),
        (
            "zero budget",
            lambda: client.post(url + "/context", json={"query": "q", "budget_tokens": 0}),
            422,
            "invalid_request",
        ),
        (
            "string budget",
            lambda: client.post(url + "/context", json={"query": "q", "budget_tokens": "100"}),
            422,
            "invalid_request",
        ),
        (
            "budget too small",
            lambda: client.post(url + "/context", json={"query": "q", "budget_tokens": 5}),
            422,
            "budget_too_small",
        ),
        (
            "unknown role",
            lambda: client.post(url + "/messages", json={"role": "wizard", "content": "hi"}),
            422,
            "invalid_request",
        ),
        (
            "unknown importance",
            lambda: client.post(url + "/messages", json={"role": "user", "content": "hi", "importance": "HUGE"}),
            422,
            "invalid_request",
        ),
        (
            "extra field",
            lambda: client.post(url + "/messages", json={"role": "user", "content": "hi", "admin": True}),
            422,
            "invalid_request",
        ),
        (
            "oversized message",
            lambda: client.post(url + "/messages", json={"role": "user", "content": "a" * (70 * 1024)}),
            422,
            "invalid_request",
        ),
        (
            "oversized multibyte message",
            lambda: client.post(url + "/messages", json={"role": "user", "content": "я" * 40_000}),
            422,
            "invalid_request",
        ),
        (
            "stateless unknown role",
            lambda: client.post(
                "/v1/context", json={"messages": [{"role": "root", "content": "x"}], "query": "q", "budget_tokens": 50}
            ),
            422,
            "invalid_request",
        ),
        (
            "chat unknown role",
            lambda: client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "root", "content": "x"}, {"role": "user", "content": "q"}]},
            ),
            422,
            "invalid_request",
        ),
        (
            "chat without user",
            lambda: client.post("/v1/chat/completions", json={"messages": [{"role": "system", "content": "x"}]}),
            422,
            "invalid_request",
        ),
        (
            "chat huge budget",
            lambda: client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "q"}], "afm": {"budget_tokens": 10**9}},
            ),
            422,
            "invalid_request",
        ),
        ("missing key", lambda: httpx.get(server.url + url, trust_env=False), 401, "unauthorized"),
        (
            "wrong key",
            lambda: httpx.get(server.url + url, headers={"Authorization": "Bearer nope"}, trust_env=False),
            401,
            "unauthorized",
        ),
        (
            "key without Bearer",
            lambda: httpx.get(server.url + url, headers={"Authorization": KEY}, trust_env=False),
            401,
            "unauthorized",
        ),
        (
            "wrong key on chat",
            lambda: httpx.post(
                server.url + "/v1/chat/completions", json={}, headers={"Authorization": "Bearer x"}, trust_env=False
            ),
            401,
            "unauthorized",
        ),
        ("unknown session", lambda: client.get("/v1/sessions/AAAAAAAAAAAAAAAAAAAAAAAA"), 404, "not_found"),
        (
            "unknown session context",
            lambda: client.post(
                "/v1/sessions/AAAAAAAAAAAAAAAAAAAAAAAA/context", json={"query": "q", "budget_tokens": 50}
            ),
            404,
            "not_found",
        ),
        ("traversal encoded", lambda: client.get("/v1/sessions/..%2F..%2Fetc%2Fpasswd"), 404, "not_found"),
        ("traversal dots", lambda: client.get("/v1/sessions/...."), 404, "not_found"),
        (
            "traversal in append",
            lambda: client.post(
                "/v1/sessions/%2e%2e%2f%2e%2e%2fafm-local.db/messages", json={"role": "user", "content": "x"}
            ),
            404,
            "not_found",
        ),
        ("sql-ish id", lambda: client.get("/v1/sessions/x'%20OR%20'1'='1"), 404, "not_found"),
        ("unknown route", lambda: client.get("/v1/nothing"), 404, "not_found"),
        ("wrong method", lambda: client.put("/v1/sessions"), 405, "method_not_allowed"),
    ]
    for name, call, status, kind in cases:
        error = is_error(call(), status)  # afm's own kind, or on a proxy route the API's type and afm's kind as code
        assert kind in (error["type"], error.get("code")), (name, error)
        assert httpx.get(server.url + "/healthz", trust_env=False).status_code == 200, name
    # The session is untouched and still serves.
    r = client.get(url)
    assert r.status_code == 200 and len(r.json()["messages"]) == 2
    assert server.alive()


# ------------------------------------------------------------------------------------------ durability


def test_sigkill_during_writes_loses_nothing_acknowledged(spawn_server, tmp_path):
    db = tmp_path / "crash.db"
    srv = spawn_server("--db", str(db), "--no-abstractive", name="crash")
    with httpx.Client(base_url=srv.url, timeout=30.0, trust_env=False) as c:
        sid = c.post("/v1/sessions").json()["id"]
    acked: list[str] = []
    failures: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        with httpx.Client(base_url=srv.url, timeout=30.0, trust_env=False) as c:
            i = 0
            while not stop.is_set():
                text = f"Note {i}: the meeting with supplier {i % 7} about order #{1000 + i} moved to {8 + i % 10}:30."
                try:
                    r = c.post(
                        f"/v1/sessions/{sid}/messages",  # importance given: this test is about storage
                        json={"role": "user" if i % 2 else "assistant", "content": text, "importance": "RELEVANT"},
                    )
                except httpx.HTTPError:
                    return  # the server died under us: this one was never acknowledged
                if r.status_code == 201:
                    acked.append(r.json()["id"])
                else:
                    failures.append(r.text)
                i += 1

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 90
    while len(acked) < 40 and time.monotonic() < deadline and not failures:
        time.sleep(0.02)
    srv.kill()  # SIGKILL in the middle of the burst
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert not failures, failures[:3]
    assert len(acked) >= 40

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = [r[0] for r in conn.execute("SELECT message_id FROM messages WHERE session_id = ? ORDER BY seq", (sid,))]
    seqs = [r[0] for r in conn.execute("SELECT seq FROM messages WHERE session_id = ? ORDER BY seq", (sid,))]
    artifacts_before = conn.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0]
    conn.close()
    assert set(acked) <= set(stored), "an acknowledged message was lost"
    assert len(stored) - len(acked) <= len(threads)  # at most the requests in flight at the kill
    assert seqs == list(range(len(seqs)))

    again = spawn_server("--db", str(db), "--no-abstractive", name="restart")
    with httpx.Client(base_url=again.url, timeout=60.0, trust_env=False) as c:
        r = c.get(f"/v1/sessions/{sid}")  # restores the session: every artifact from SQLite
        assert r.status_code == 200
        assert [m["id"] for m in r.json()["messages"]] == stored
        text = c.get("/metrics").text
        assert metric(text, "afm_cache_misses_total", cache="session") == 0, "restoring recomputed an artifact"
        assert metric(text, "afm_cache_hits_total", cache="session") > 0
        r = c.post(f"/v1/sessions/{sid}/context", json={"query": "When is the supplier meeting?", "budget_tokens": 300})
        assert r.status_code == 200 and len(r.json()["items"]) == len(stored)
    conn = sqlite3.connect(db)
    # Only the new query's embedding was added; no message artifact was recomputed.
    assert conn.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0] == artifacts_before + 1
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_concurrent_sessions_keep_order(spawn_server, tmp_path):
    srv = spawn_server("--db", str(tmp_path / "conc.db"), name="conc")
    with httpx.Client(base_url=srv.url, timeout=60.0, trust_env=False) as c:
        sids = [c.post("/v1/sessions").json()["id"] for _ in range(4)]
    errors: list[str] = []

    def worker(k: int) -> None:
        with httpx.Client(base_url=srv.url, timeout=60.0, trust_env=False) as c:
            for i in range(12):
                sid = sids[(k + i) % len(sids)]
                r = c.post(
                    f"/v1/sessions/{sid}/messages",
                    json={"role": "user", "content": f"worker {k} item {i} for {sid[:4]}"},
                )
                if r.status_code != 201:
                    errors.append(r.text)
                r = c.post(f"/v1/sessions/{sid}/context", json={"query": f"item {i}", "budget_tokens": 200})
                if r.status_code != 200:
                    errors.append(r.text)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    with httpx.Client(base_url=srv.url, timeout=60.0, trust_env=False) as c:
        total = 0
        for sid in sids:
            messages = c.get(f"/v1/sessions/{sid}").json()["messages"]
            assert [m["seq"] for m in messages] == list(range(len(messages)))
            total += len(messages)
        assert total == 6 * 12


# ------------------------------------------------------------------------------------------ chat completions

needs_gguf = pytest.mark.skipif(
    not GGUF.is_file() and not GGUF_SMALL.is_file(),
    reason="no GGUF chat model in models/gguf (run `afm-local models install`)",
)


@pytest.fixture(scope="module")
def chat_servers(spawn_module_server, tmp_path_factory):
    """An upstream (afm-local with its built-in llama.cpp model) and a front server forwarding to it."""
    base = tmp_path_factory.mktemp("chat")
    upstream = spawn_module_server("--db", str(base / "upstream.db"), "--no-abstractive", name="upstream")
    front = spawn_module_server(
        "--db",
        str(base / "front.db"),
        "--upstream",
        upstream.url,
        "--api-key-env",
        "AFM_TEST_KEY",
        "--budget",
        "150",
        "--no-abstractive",
        env={"AFM_TEST_KEY": KEY},
        name="front",
    )
    return upstream, front


def chat_messages() -> list[dict[str, str]]:
    return (
        [{"role": "system", "content": "You are a concise travel assistant. Answer in one short sentence."}]
        + [{"role": r, "content": c} for r, c in HISTORY]
        + [{"role": "user", "content": "Suggest one snack for my son for the train to Sintra."}]
    )


@pytest.mark.slow
@needs_gguf
def test_openai_client_through_upstream(chat_servers):
    import openai

    upstream, front = chat_servers
    client = openai.OpenAI(base_url=front.url + "/v1", api_key=KEY, max_retries=0, timeout=300)
    raw = client.chat.completions.with_raw_response.create(
        model="local",
        messages=chat_messages(),
        max_tokens=16,
        temperature=0,
        extra_body={"afm": {"budget_tokens": 120}},
    )
    used, saved = int(raw.headers["X-AFM-Tokens-Used"]), int(raw.headers["X-AFM-Tokens-Saved"])
    assert 0 < used <= 120 and saved > 0
    assert re.fullmatch(r"full=\d+,compressed=\d+,placeholder=\d+,dropped=\d+", raw.headers["X-AFM-Fidelity"])
    counts = dict(kv.split("=") for kv in raw.headers["X-AFM-Fidelity"].split(","))
    assert sum(map(int, counts.values())) == len(HISTORY)
    completion = raw.parse()
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.role == "assistant"
    assert isinstance(completion.choices[0].message.content, str) and completion.choices[0].message.content.strip()
    assert completion.model.startswith("afm-local/")  # answered by the upstream, returned unchanged

    # Default budget (--budget 150) when the request has no afm field.
    raw = client.chat.completions.with_raw_response.create(
        model="local", messages=chat_messages(), max_tokens=4, temperature=0
    )
    assert int(raw.headers["X-AFM-Budget"]) == 150 and int(raw.headers["X-AFM-Tokens-Used"]) <= 150

    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=front.url + "/v1", api_key="wrong", max_retries=0).chat.completions.create(
            model="local", messages=chat_messages(), max_tokens=4
        )


@pytest.mark.slow
@needs_gguf
def test_openai_client_streaming_through_upstream(chat_servers):
    import openai

    upstream, front = chat_servers
    client = openai.OpenAI(base_url=front.url + "/v1", api_key=KEY, max_retries=0, timeout=300)
    raw = client.chat.completions.with_raw_response.create(
        model="local",
        messages=chat_messages(),
        max_tokens=16,
        temperature=0,
        stream=True,
        extra_body={"afm": {"budget_tokens": 200, "render": "structured"}},
    )
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert int(raw.headers["X-AFM-Tokens-Used"]) <= 200 and int(raw.headers["X-AFM-Tokens-Saved"]) > 0
    assert "X-AFM-Fidelity" in raw.headers
    pieces, finish = [], None
    for chunk in raw.parse():
        assert chunk.object == "chat.completion.chunk"
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.choices and chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
    assert "".join(pieces).strip() and finish in ("stop", "length")


@pytest.mark.slow
@needs_gguf
def test_builtin_model_direct_and_repeat_history_is_cached(chat_servers):
    upstream, _ = chat_servers
    body = {"model": "x", "messages": chat_messages(), "max_tokens": 6, "temperature": 0, "stream": True}
    with httpx.Client(base_url=upstream.url, timeout=300, trust_env=False) as c:
        with c.stream("POST", "/v1/chat/completions", json=body) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            lines = [line for line in r.iter_lines() if line.startswith("data: ")]
        assert lines[-1] == "data: [DONE]" and len(lines) >= 3
        misses = metric(c.get("/metrics").text, "afm_cache_misses_total", cache="stateless")
        r = c.post("/v1/chat/completions", json={**body, "stream": False})
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] is not None
        # The same client history again: every artifact came from the cache.
        assert metric(c.get("/metrics").text, "afm_cache_misses_total", cache="stateless") == misses


def test_upstream_unreachable_is_502(spawn_server, tmp_path):
    srv = spawn_server("--db", str(tmp_path / "u.db"), "--upstream", "http://127.0.0.1:9", name="dead-upstream")
    r = httpx.post(
        srv.url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        trust_env=False,
        timeout=60,
    )
    error = is_error(r, 502)  # OpenAI's shape on the OpenAI route: its type, afm's kind as the code
    assert (error["type"], error["code"]) == ("server_error", "upstream_error")
    assert httpx.get(srv.url + "/healthz", trust_env=False).status_code == 200


def test_named_but_unset_api_key_refuses_to_start(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "AFM_UNSET_KEY"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "afm_local",
            "serve",
            "--port",
            "9",
            "--db",
            str(tmp_path / "x.db"),
            "--api-key-env",
            "AFM_UNSET_KEY",
        ],
        cwd=REPO,
        env={**env, **THREAD_ENV, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "AFM_UNSET_KEY" in proc.stderr
    assert not (tmp_path / "x.db").exists()


GGUF = REPO / "models" / "gguf" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


@pytest.mark.slow
@pytest.mark.skipif(not GGUF.is_file(), reason="GGUF model not installed (afm-local models install)")
def test_background_topics_are_persisted_and_survive_a_restart(spawn_server, tmp_path):
    """A GGUF model named with --compressor-model (the default names none) names a long message's topic in
    the background; the store keeps it."""
    db = tmp_path / "topics.db"
    srv = spawn_server("--db", str(db), "--compressor-model", "qwen2.5-coder-0.5b-instruct", name="topics")
    text = (
        "[RELEVANT] We compared three riverside hotels in Bangkok: the Chatrium costs 3,900 baht a night with a "
        "shuttle boat, the Millennium Hilton 4,600 with a rooftop pool, and the Peninsula 8,200 with a spa."
    )
    with httpx.Client(base_url=srv.url, timeout=60.0, trust_env=False) as c:
        sid = c.post("/v1/sessions").json()["id"]
        assert c.post(f"/v1/sessions/{sid}/messages", json={"role": "user", "content": text}).status_code == 201
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            with sqlite3.connect(db) as con:
                keys = [k for (k,) in con.execute("SELECT key FROM artifacts WHERE kind = 'topic'")]
            if any(k.startswith("guarded-llama:") for k in keys):
                break
            time.sleep(1)
        else:
            pytest.fail(f"no model topic persisted; topic keys {keys}\n{srv.log()}")
        before = c.get(f"/v1/sessions/{sid}").json()["messages"][0]["placeholder"]
    srv.stop()
    again = spawn_server("--db", str(db), "--compressor-model", "qwen2.5-coder-0.5b-instruct", name="topics-restart")
    with httpx.Client(base_url=again.url, timeout=60.0, trust_env=False) as c:
        assert c.get(f"/v1/sessions/{sid}").json()["messages"][0]["placeholder"] == before
