"""The MCP tools from the SDK's own client: over stdio (``afm-local mcp``, a child process, the default tenant)
and over streamable HTTP (``/mcp`` under a real ``afm-local serve``, where the API keys are enforced and each
key's tools see only its tenant's sessions)."""

from __future__ import annotations

import json
import os
import sys

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from afm_local.server.store import open_store
from tests import THREAD_ENV
from tests.support.servers import REPO, create_key

KEY = "mcp-test-key"
CONSTRAINT = "I have a severe peanut allergy: never suggest anything with peanuts, even traces."
CHATTER = [
    {"role": "user", "content": f"Tell me about day {i} of the trip: temples, markets and the river."}
    for i in range(12)
]
TOOLS = {"add_messages", "get_context", "explain", "list_sessions", "forget_session"}


def _data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content or json.loads(result.content[0].text)


async def _exercise(client: Client) -> None:
    """Every tool once, in the order an agent would use them, checking what each says."""
    assert {t.name for t in (await client.list_tools()).tools} >= TOOLS
    added = _data(
        await client.call_tool("add_messages", {"messages": [{"role": "user", "content": CONSTRAINT}] + CHATTER})
    )
    session = added["session"]
    assert added["added"][0]["importance"] == "CRITICAL" and len(added["added"]) == 13
    more = _data(
        await client.call_tool(
            "add_messages",
            {
                "session": session,
                "messages": [{"role": "assistant", "content": "Pad thai is a classic.", "importance": "trivial"}],
            },
        )
    )
    assert more["added"][0]["seq"] == 13 and more["added"][0]["importance"] == "TRIVIAL"
    ctx = _data(
        await client.call_tool(
            "get_context", {"session": session, "query": "What should I eat tonight?", "budget_tokens": 200}
        )
    )
    assert ctx["tokens_used"] <= 200 and any(m["content"] == CONSTRAINT for m in ctx["messages"])
    why = _data(
        await client.call_tool(
            "explain",
            {
                "session": session,
                "query": "What should I eat tonight?",
                "budget_tokens": 200,
                "options": {"render": "structured"},
            },
        )
    )
    assert len(why["items"]) == 14 and why["items"][0]["reason"] == "critical: sent whole"
    assert {i["fidelity"] for i in why["items"]} - {"full"}  # 200 tokens cannot hold everything whole
    assert session in [s["id"] for s in _data(await client.call_tool("list_sessions", {}))["sessions"]]
    assert _data(await client.call_tool("forget_session", {"session": session}))["deleted"] is True
    gone = await client.call_tool("get_context", {"session": session, "query": "q", "budget_tokens": 100})
    assert gone.is_error and "unknown session" in gone.content[0].text
    too_small = await client.call_tool("get_context", {"session": session, "query": "q", "budget_tokens": 0})
    assert too_small.is_error


def test_the_tools_over_stdio_as_the_default_tenant(tmp_path):
    db = tmp_path / "mcp.db"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "afm_local", "mcp", "--db", str(db)],
        env={**os.environ, **THREAD_ENV, "PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )

    async def run() -> str:
        async with Client(params, read_timeout_seconds=120) as client:
            await _exercise(client)
            return _data(await client.call_tool("add_messages", {"messages": CHATTER[:1]}))["session"]

    kept = anyio.run(run)
    store = open_store(db)
    try:
        assert [s["id"] for s in store.tenant("default").list_sessions()] == [kept]
        assert store.tenant("alice").list_sessions() == []
    finally:
        store.close()


@pytest.fixture(scope="module")
def afm(spawn_module_server, tmp_path_factory):
    """A server with the --api-key-env key (tenant ``default``) and two tenants' keys made in its store."""
    db = tmp_path_factory.mktemp("mcp") / "afm.db"
    keys = {tenant: create_key(str(db), tenant) for tenant in ("alice", "bob")}
    server = spawn_module_server(
        "--db",
        str(db),
        "--api-key-env",
        "AFM_MCP_KEY",
        "--no-abstractive",
        "--rate-limit",
        "0",
        env={"AFM_MCP_KEY": KEY},
        name="mcp",
    )
    server.keys = {"default": KEY, **keys}
    return server


async def _as(afm, tenant: str, calls) -> list:
    """Tool calls ``(name, arguments)`` over /mcp with ``tenant``'s key; their results, in order."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {afm.keys[tenant]}"}, timeout=120) as http:
        async with Client(streamable_http_client(afm.url + "/mcp", http_client=http)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]


def test_the_tools_over_http_behind_the_api_key(afm):
    async def run() -> None:
        headers = {"Authorization": f"Bearer {KEY}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            async with Client(streamable_http_client(afm.url + "/mcp", http_client=http)) as client:
                await _exercise(client)

    anyio.run(run)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        refused = httpx.post(afm.url + "/mcp", json=hello, headers=headers, timeout=30)
        assert refused.status_code == 401 and refused.json()["error"]["type"] == "unauthorized"
    # stateless: no server-initiated stream to hold open (the SDK's GET would never end)
    stream = httpx.get(
        afm.url + "/mcp", headers={"Authorization": f"Bearer {KEY}", "Accept": "text/event-stream"}, timeout=30
    )
    assert stream.status_code == 405 and stream.json()["error"]["type"] == "method_not_allowed"


def test_a_tenant_reaches_only_its_own_sessions_through_mcp(afm):
    """Alice's session, made through MCP: Bob cannot list, read, explain, append to or forget it through MCP
    (each answers as for a missing session), nor the default tenant through the routes; Alice's is intact."""
    secret = "[!] Alice's locker code is 7431-QZ."
    ask = {"query": "What is the locker code?", "budget_tokens": 300}

    async def run() -> None:
        [made] = await _as(afm, "alice", [("add_messages", {"messages": [{"role": "user", "content": secret}]})])
        mine = _data(made)["session"]
        seen = {}
        for session in (mine, "M" * 22):  # Bob's answers for Alice's session and for one nobody has
            answers = await _as(
                afm,
                "bob",
                [
                    ("get_context", {"session": session, **ask}),
                    ("explain", {"session": session, **ask}),
                    ("add_messages", {"session": session, "messages": [{"role": "user", "content": "Mine now."}]}),
                    ("forget_session", {"session": session}),
                ],
            )
            assert all(a.is_error and a.content[0].text.endswith(": unknown session") for a in answers)
            seen[session] = [(a.is_error, a.content[0].text, a.structured_content) for a in answers]
        assert seen[mine] == seen["M" * 22]
        [listed] = await _as(afm, "bob", [("list_sessions", {})])
        assert _data(listed)["sessions"] == []
        headers = {"Authorization": f"Bearer {KEY}"}
        assert httpx.get(f"{afm.url}/v1/sessions/{mine}", headers=headers, timeout=30).status_code == 404
        assert httpx.get(f"{afm.url}/v1/sessions", headers=headers, timeout=30).json()["sessions"] == []
        listed, ctx = await _as(afm, "alice", [("list_sessions", {}), ("get_context", {"session": mine, **ask})])
        assert [s["id"] for s in _data(listed)["sessions"]] == [mine]
        assert [m["content"] for m in _data(ctx)["messages"]][0] == "Alice's locker code is 7431-QZ."
        alice = {"Authorization": f"Bearer {afm.keys['alice']}"}
        stored = httpx.get(f"{afm.url}/v1/sessions/{mine}", headers=alice, timeout=30).json()
        assert [m["content"] for m in stored["messages"]] == [secret]  # nothing of Bob's was appended

    anyio.run(run)


def test_add_messages_stores_all_of_a_call_or_nothing_and_says_why(afm):
    """A call whose third message carries a broken image: refused with the reason, nothing of it stored, not
    even the new session it would have made; into an existing session, none of its messages lands."""
    broken = {
        "role": "user",
        "content": [
            {"type": "text", "text": "my receipt"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"}},
        ],
    }  # a PNG cut after its header
    messages = [{"role": "user", "content": CONSTRAINT}, CHATTER[0], broken]

    async def run() -> None:
        before = _data((await _as(afm, "alice", [("list_sessions", {})]))[0])["sessions"]
        [failed] = await _as(afm, "alice", [("add_messages", {"messages": messages})])
        assert failed.is_error and "image" in failed.content[0].text.lower() and "Traceback" not in str(failed.content)
        assert _data((await _as(afm, "alice", [("list_sessions", {})]))[0])["sessions"] == before
        made = _data((await _as(afm, "alice", [("add_messages", {"messages": CHATTER[:2]})]))[0])["session"]
        [failed] = await _as(afm, "alice", [("add_messages", {"session": made, "messages": messages})])
        assert failed.is_error
        why = _data((await _as(afm, "alice", [("explain", {"session": made, "query": "q", "budget_tokens": 500})]))[0])
        assert len(why["items"]) == 2  # the two messages stored before, none of the failed call's

    anyio.run(run)
