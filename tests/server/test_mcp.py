"""The MCP tools from the SDK's own client: over stdio (``afm-local mcp``, a child process) and over streamable
HTTP (``/mcp`` under a real ``afm-local serve``, where the API key is enforced)."""

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

from tests import THREAD_ENV
from tests.support.servers import REPO

KEY = "mcp-test-key"
CONSTRAINT = "I have a severe peanut allergy: never suggest anything with peanuts, even traces."
CHATTER = [{"role": "user", "content": f"Tell me about day {i} of the trip: temples, markets and the river."}
           for i in range(12)]
TOOLS = {"add_messages", "get_context", "explain", "list_sessions", "forget_session"}


def _data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content or json.loads(result.content[0].text)


async def _exercise(client: Client) -> None:
    """Every tool once, in the order an agent would use them, checking what each says."""
    assert {t.name for t in (await client.list_tools()).tools} >= TOOLS
    added = _data(await client.call_tool("add_messages", {"messages": [{"role": "user", "content": CONSTRAINT}]
                                                          + CHATTER}))
    session = added["session"]
    assert added["added"][0]["importance"] == "CRITICAL" and len(added["added"]) == 13
    more = _data(await client.call_tool("add_messages", {"session": session, "messages": [
        {"role": "assistant", "content": "Pad thai is a classic.", "importance": "trivial"}]}))
    assert more["added"][0]["seq"] == 13 and more["added"][0]["importance"] == "TRIVIAL"
    ctx = _data(await client.call_tool("get_context", {"session": session, "query": "What should I eat tonight?",
                                                       "max_tokens": 200}))
    assert ctx["tokens_used"] <= 200 and any(m["content"] == CONSTRAINT for m in ctx["messages"])
    why = _data(await client.call_tool("explain", {"session": session, "query": "What should I eat tonight?",
                                                   "max_tokens": 200, "render": "structured"}))
    assert len(why["items"]) == 14 and why["items"][0]["reason"] == "critical: sent whole"
    assert {i["fidelity"] for i in why["items"]} - {"full"}  # 200 tokens cannot hold everything whole
    assert session in [s["id"] for s in _data(await client.call_tool("list_sessions", {}))["sessions"]]
    assert _data(await client.call_tool("forget_session", {"session": session}))["deleted"] is True
    gone = await client.call_tool("get_context", {"session": session, "query": "q", "max_tokens": 100})
    assert gone.is_error and "unknown session" in gone.content[0].text
    too_small = await client.call_tool("get_context", {"session": session, "query": "q", "max_tokens": 0})
    assert too_small.is_error


def test_the_tools_over_stdio(tmp_path):
    params = StdioServerParameters(command=sys.executable, args=["-m", "afm_local", "mcp", "--db",
                                                                 str(tmp_path / "mcp.db")],
                                   env={**os.environ, **THREAD_ENV, "PYTHONPATH": str(REPO)}, cwd=str(REPO))

    async def run() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            await _exercise(client)

    anyio.run(run)


@pytest.fixture(scope="module")
def afm(spawn_module_server, tmp_path_factory):
    db = tmp_path_factory.mktemp("mcp") / "afm.db"
    return spawn_module_server("--db", str(db), "--api-key-env", "AFM_MCP_KEY", "--no-abstractive",
                               env={"AFM_MCP_KEY": KEY}, name="mcp")


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
