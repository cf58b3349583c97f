"""What the store tests share: a real PostgreSQL cluster (``scripts.pgcluster``) and reading a store's
rows straight from the database, not through afm-local. The fixtures that use them are in conftest.py."""

from __future__ import annotations

import atexit
import os
import sqlite3
import sys
from typing import Any

import pytest

from scripts.pgcluster import ClusterError, PgCluster, clean_stale, find_bindir


def require_postgres() -> None:
    """Skip (printing why) when PostgreSQL or its driver is not installed; scripts/test.sh installs both."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401

        find_bindir()
    except (ImportError, ClusterError) as exc:
        reason = f"PostgreSQL tests skipped: {exc}"
        print(f"\n{reason}", file=sys.stderr)
        pytest.skip(reason)


def new_cluster(**options: Any) -> PgCluster:
    """A started cluster that is stopped and deleted at exit even if a finalizer never runs."""
    require_postgres()
    clean_stale()  # folders of earlier runs that died without stopping their cluster
    cluster = PgCluster.create(owner_pid=os.getpid(), **options)
    atexit.register(cluster.destroy)
    return cluster


def query(db: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` (``?`` placeholders) on a SQLite file or a PostgreSQL URL."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            cur = conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
            return [tuple(r) for r in cur.fetchall()] if cur.description else []
    with sqlite3.connect(db) as conn:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]


def stored_messages(db: str, session_id: str) -> list[tuple[int, str]]:
    """``(seq, message_id)`` of a session, in order."""
    return [
        (int(s), str(m))
        for s, m in query(db, "SELECT seq, message_id FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
    ]
