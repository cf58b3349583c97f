"""The SQLite store behind ``afm-local serve``: sessions, their messages, and the artifact cache.

Durability
    The database runs in WAL mode. ``synchronous=NORMAL`` (the default here) makes every committed
    transaction survive a crash of the *process* (SIGKILL, OOM kill, a segfault): the commit is in the
    WAL file in the OS page cache before ``commit()`` returns, and SQLite replays it on the next open.
    It does not survive a power loss or kernel crash between the commit and the next checkpoint;
    pass ``synchronous="FULL"`` (``ServerSettings.synchronous``) for that, at the price of an fsync
    per commit. The server acknowledges a message only after its row is committed.

Schema
    ``schema_version`` holds one row with the version. ``_migrate`` applies the steps in
    ``MIGRATIONS`` in order inside one transaction, so a database created by an older release is
    upgraded on open; a database from a *newer* release is refused rather than silently misread.
    To change the schema: append a step to ``MIGRATIONS`` (never edit an old one).

Artifacts
    ``artifacts(kind, key, blob)`` implements ``afm_local.cache.CacheBackend``: keys are
    ``"<component>:<sha256 of the text>"``, so they are shared between sessions and contain no text.
    Blobs (embeddings, compressed forms, topics) are derived from message content: deleting a session
    removes its messages but not artifacts that other sessions may share; ``purge_orphan_artifacts``
    is not provided, see docs/server.md. ``secure_delete`` is on, so deleted rows are zeroed on disk.

Threads
    One connection per thread (``threading.local``) and one process-wide write lock, so writers never
    see ``SQLITE_BUSY`` and readers never block writers (WAL).

Session ids are random (``secrets.token_urlsafe``), validated by ``SESSION_ID_RE`` and only ever
used as SQL parameters, never in paths.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..core.errors import StoreError, UnknownSession

SCHEMA_VERSION = 1
SESSION_ID_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MESSAGE_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

MIGRATIONS: list[str] = [
    # 0 -> 1: the initial schema.
    """
    CREATE TABLE sessions (
        id       TEXT PRIMARY KEY,
        created  REAL NOT NULL
    );
    CREATE TABLE messages (
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq         INTEGER NOT NULL,
        message_id  TEXT NOT NULL,
        role        TEXT NOT NULL,
        content     TEXT NOT NULL,
        importance  TEXT,
        created     REAL NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE UNIQUE INDEX messages_by_id ON messages(session_id, message_id);
    CREATE TABLE artifacts (
        kind  TEXT NOT NULL,
        key   TEXT NOT NULL,
        blob  BLOB NOT NULL,
        PRIMARY KEY (kind, key)
    ) WITHOUT ROWID;
    """,
]
assert len(MIGRATIONS) == SCHEMA_VERSION




def new_session_id() -> str:
    return secrets.token_urlsafe(18)  # 24 characters of [A-Za-z0-9_-]


def valid_session_id(session_id: object) -> bool:
    return isinstance(session_id, str) and SESSION_ID_RE.fullmatch(session_id) is not None


class Store:
    """Sessions, messages and artifacts in one SQLite file; safe to share between threads."""

    def __init__(self, path: Path | str, *, synchronous: str = "NORMAL") -> None:
        if synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError("synchronous must be NORMAL, FULL or EXTRA")
        self.path = Path(path)
        self.synchronous = synchronous.upper()
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._conn_lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._migrate()

    # ------------------------------------------------------------------ connections

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
            with self._conn_lock:
                self._connections.append(conn)
        return conn

    def close(self) -> None:
        with self._conn_lock:
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._connections.clear()
        self._local = threading.local()

    def _migrate(self) -> None:
        conn = self._conn()
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                row = conn.execute("SELECT version FROM schema_version").fetchone()
                version = row[0] if row else 0
                if version > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path} has schema version {version}, newer than this afm-local ({SCHEMA_VERSION})"
                    )
                for step in MIGRATIONS[version:]:
                    for statement in step.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                if row is None:
                    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                else:
                    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ sessions

    def create_session(self) -> dict[str, Any]:
        session_id, created = new_session_id(), time.time()
        with self._write_lock:
            self._conn().execute("INSERT INTO sessions (id, created) VALUES (?, ?)", (session_id, created))
        return {"id": session_id, "created": created}

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        if not valid_session_id(session_id):
            return None
        row = self._conn().execute("SELECT id, created FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return {"id": row[0], "created": row[1]} if row else None

    def list_sessions(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self._conn().execute(
            "SELECT s.id, s.created, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) "
            "FROM sessions s ORDER BY s.created DESC LIMIT ?",
            (int(limit),),
        ).fetchall()
        return [{"id": r[0], "created": r[1], "messages": r[2]} for r in rows]

    def delete_session(self, session_id: str) -> bool:
        if not valid_session_id(session_id):
            return False
        with self._write_lock:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                deleted = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return deleted > 0

    # ------------------------------------------------------------------ messages

    def append_message(
        self, session_id: str, message_id: str, role: str, content: str, importance: str | None
    ) -> dict[str, Any]:
        """Append one message and commit; returns the row (with its ``seq``) once it is durable."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        created = time.time()
        with self._write_lock:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                    raise UnknownSession(session_id)
                seq = conn.execute(
                    "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?", (session_id,)
                ).fetchone()[0]
                conn.execute(
                    "INSERT INTO messages (session_id, seq, message_id, role, content, importance, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (session_id, seq, message_id, role, content, importance, created),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return {
            "session_id": session_id,
            "seq": seq,
            "id": message_id,
            "role": role,
            "content": content,
            "importance_override": importance,
            "created": created,
        }

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._conn().execute(
            "SELECT seq, message_id, role, content, importance, created FROM messages "
            "WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        return [
            {"seq": r[0], "id": r[1], "role": r[2], "content": r[3], "importance_override": r[4], "created": r[5]}
            for r in rows
        ]

    def count_messages(self, session_id: str | None = None) -> int:
        if session_id is None:
            return self._conn().execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        return self._conn().execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)).fetchone()[0]

    # ------------------------------------------------------------------ CacheBackend

    def load_artifact(self, kind: str, key: str) -> bytes | None:
        row = self._conn().execute("SELECT blob FROM artifacts WHERE kind = ? AND key = ?", (kind, key)).fetchone()
        return bytes(row[0]) if row else None

    def save_artifact(self, kind: str, key: str, data: bytes) -> None:
        with self._write_lock:
            self._conn().execute(
                "INSERT OR REPLACE INTO artifacts (kind, key, blob) VALUES (?, ?, ?)", (kind, key, sqlite3.Binary(data))
            )

    def count_artifacts(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM artifacts").fetchone()[0]

    # ------------------------------------------------------------------ maintenance

    def integrity_check(self) -> str:
        return self._conn().execute("PRAGMA integrity_check").fetchone()[0]

    def schema_version(self) -> int:
        return self._conn().execute("SELECT version FROM schema_version").fetchone()[0]
