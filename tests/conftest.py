"""Shared test fixtures: the network blocked, real server processes, the real token counter, embedder and
guard, and PostgreSQL databases. The helpers behind them are in ``tests.support``."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scripts.pgcluster import PgCluster
from tests.support.real import FIX, installed
from tests.support.servers import NetworkUsed, ServerProcess, server_factory
from tests.support.stores import new_cluster


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every socket connection and name lookup raises ``NetworkUsed``."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise NetworkUsed(f"network access attempted: {args[1:] or kwargs}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture
def spawn_server(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """``spawn_server(*cli_args, env=..., name=...)`` starts a server; every one is stopped afterwards."""
    spawn, started = server_factory(tmp_path)
    yield spawn
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def spawn_module_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., ServerProcess]]:
    """Like ``spawn_server`` but shared by a whole test module (servers take seconds to start)."""
    spawn, started = server_factory(tmp_path_factory.mktemp("servers"))
    yield spawn
    for server in started:
        server.stop()


# -- the real token counter, embedder and guard, each skipped (with the command that fixes it) when its
#    model file is not installed --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def counter():
    if not installed("tiktoken"):
        pytest.skip(f"tiktoken vocabulary not installed; run `{FIX}`")
    from afm_local.local.tokens import TiktokenCounter

    return TiktokenCounter()


@pytest.fixture(scope="session")
def embedder():
    if not installed("minilm-l6-v2"):
        pytest.skip(f"MiniLM embedder not installed; run `{FIX}`")
    from afm_local.local.embedding import OnnxEmbedder

    return OnnxEmbedder(threads=1)


@pytest.fixture(scope="session")
def guard(embedder, counter):
    from afm_local.text.checks import SummaryGuard

    return SummaryGuard(embedder, counter)


# ------------------------------------------------------------------------------------------ stores


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One private PostgreSQL cluster for the whole test session (skipped, with the reason, only when
    PostgreSQL is not installed)."""
    cluster = new_cluster()
    yield cluster
    cluster.destroy()


@pytest.fixture
def pg_db(pg_cluster: PgCluster) -> Iterator[str]:
    """The URL of a fresh database, dropped after the test."""
    dsn = pg_cluster.create_database()
    yield dsn
    pg_cluster.drop_database(dsn.rsplit("/", 1)[1])


@pytest.fixture(params=["sqlite", "postgresql"])
def store_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """``--db`` for a fresh store: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return str(request.getfixturevalue("pg_db"))


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def module_store_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``--db`` for a store shared by a test module's server: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path_factory.mktemp("store") / "store.db")
    return request.getfixturevalue("pg_cluster").create_database()
