"""The whole pipeline runs with every socket blocked: nothing reaches the network."""

from __future__ import annotations

import socket

import pytest

from afm_local import FocusManager, local_components

from engine import example


class NetworkUsed(AssertionError):
    pass


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise NetworkUsed(f"network access attempted: {args[1:] or kwargs}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_pipeline_makes_no_network_connection(no_network):
    comps = local_components(threads=1, abstractive=True)  # every model afresh, the GGUF one too
    with pytest.raises(NetworkUsed):
        socket.create_connection(("127.0.0.1", 9))
    data = example("peanut_trip")
    fm = FocusManager(components=comps)
    fm.add_messages(data["messages"])
    for render in ("chat", "structured"):
        ctx = fm.build_context(data["query"], 400, data["preamble"], render=render)
        assert ctx.tokens_used <= 400
