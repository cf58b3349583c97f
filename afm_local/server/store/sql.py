"""The store's operations, written once in SQL that SQLite and PostgreSQL both run.

``SQLStore`` holds every query and the migration runner; a backend supplies ``_transaction`` (a
connection inside a transaction, with its driver's errors translated to ``StoreError`` classes and
its own durability checks), ``check`` and ``close``. The shared SQL uses ``?`` placeholders, which
the PostgreSQL backend rewrites for psycopg.

Ordering
    ``sessions.next_seq`` is the next message's position. An append runs ``UPDATE sessions SET
    next_seq = next_seq + 1 ... RETURNING`` and its ``INSERT`` in one transaction: the update locks
    the session row until the commit, so concurrent appends to one session, from any number of
    threads or processes, take turns, and a rolled-back append gives its number back. The order is
    total and gap-free without a retry loop, and appends to different sessions do not wait for each
    other (in PostgreSQL; SQLite has one writer at a time anyway).

Acknowledgement
    Every method that writes returns only after its transaction committed through the backend's
    durability rule (see the backends), so the server acknowledges nothing that is not stored.
"""

from __future__ import annotations

import re
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Protocol

from ...core.errors import StoreError, UnknownSession
from ...core.parts import Attachment
from .schema import MIGRATIONS, MIGRATIONS_TABLE, TYPES

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


def new_session_id() -> str:
    return secrets.token_urlsafe(18)  # 24 characters of [A-Za-z0-9_-]


def valid_session_id(session_id: object) -> bool:
    return isinstance(session_id, str) and SESSION_ID_RE.fullmatch(session_id) is not None


class Executor(Protocol):
    """What the shared SQL needs from a connection: ``execute`` with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...


def _message_row(r: Sequence[Any]) -> dict[str, Any]:
    return {"seq": r[0], "id": r[1], "role": r[2], "content": r[3], "importance": r[4], "created": r[5]}


def _attachment(r: Sequence[Any]) -> Attachment:
    """A stored part (``part, url, detail, filename, data``) as the record a turn carries."""
    return Attachment(r[0], bytes(r[4]) if r[4] is not None else b"", r[1] or "", r[2], r[3])


class SQLStore(ABC):
    """Sessions, messages and artifacts over one SQL database; safe to share between threads."""

    dialect: ClassVar[str]
    description: str  # the file, or the URL without its password: what logs and errors may show
    store_id: str | None = None  # the database's random identity (``store_meta``), read when it is opened

    @abstractmethod
    def _transaction(self, *, write: bool, durable: bool = True) -> AbstractContextManager[Executor]:
        """A connection in a transaction that commits when the block ends. ``durable=False`` marks a
        write that may be lost in a crash without harm (a derived artifact): a backend may then skip
        waiting for the disk. Driver errors leave as ``StoreError`` classes."""

    @abstractmethod
    def check(self) -> None:
        """Raise ``StoreUnavailable`` unless the store is reachable, writable in principle, and the same
        database it was opened on (the health check)."""

    @abstractmethod
    def close(self) -> None: ...

    # ------------------------------------------------------------------ schema

    def _lock_migrations(self, db: Executor) -> None:
        """Make concurrent openers (several workers starting at once) migrate one after another."""

    def _adopt_legacy(self, db: Executor, applied: set[str]) -> set[str]:
        """Record what a database created before named migrations already has."""
        return applied

    def _migrate(self) -> str:
        """Apply the missing migrations in one transaction; returns the store's identity."""
        with self._transaction(write=True) as db:
            self._lock_migrations(db)
            db.execute(MIGRATIONS_TABLE.format(**TYPES[self.dialect]))
            applied = self._adopt_legacy(db, {r[0] for r in db.execute("SELECT name FROM _migrations").fetchall()})
            unknown = sorted(applied - {m.name for m in MIGRATIONS})
            if unknown:
                raise StoreError(
                    f"{self.description} was written by a newer afm-local (migrations {', '.join(unknown)} "
                    f"are unknown here); upgrade afm-local"
                )
            for migration in MIGRATIONS:
                if migration.name not in applied:
                    for statement in migration.statements(self.dialect):
                        db.execute(statement)
                    db.execute("INSERT INTO _migrations (name, applied) VALUES (?, ?)", (migration.name, time.time()))
            db.execute(
                "INSERT INTO store_meta (key, value) VALUES ('store_id', ?) ON CONFLICT (key) DO NOTHING",
                (secrets.token_hex(16),),
            )
            return str(db.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()[0])

    # ------------------------------------------------------------------ sessions

    def create_session(self) -> dict[str, Any]:
        session_id, created = new_session_id(), time.time()
        with self._transaction(write=True) as db:
            db.execute("INSERT INTO sessions (id, created) VALUES (?, ?)", (session_id, created))
        return {"id": session_id, "created": created}

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        if not valid_session_id(session_id):
            return None
        with self._transaction(write=False) as db:
            row = db.execute("SELECT id, created FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return {"id": row[0], "created": row[1]} if row else None

    def list_sessions(self, limit: int = 100) -> list[dict[str, Any]]:
        with self._transaction(write=False) as db:
            rows = db.execute(
                "SELECT id, created, next_seq FROM sessions ORDER BY created DESC LIMIT ?", (int(limit),)
            ).fetchall()
        return [{"id": r[0], "created": r[1], "messages": r[2]} for r in rows]

    def delete_session(self, session_id: str) -> bool:
        if not valid_session_id(session_id):
            return False
        with self._transaction(write=True) as db:
            files = db.execute(
                "SELECT DISTINCT sha256 FROM message_attachments WHERE session_id = ? AND sha256 IS NOT NULL",
                (session_id,),
            ).fetchall()
            db.execute("DELETE FROM message_attachments WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            deleted = db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
            for (sha256,) in files:  # the files no other message sends
                db.execute(
                    "DELETE FROM attachments WHERE sha256 = ? AND NOT EXISTS "
                    "(SELECT 1 FROM message_attachments WHERE sha256 = ?)",
                    (sha256, sha256),
                )
        return deleted > 0

    # ------------------------------------------------------------------ messages

    def append_message(
        self,
        session_id: str,
        message_id: str,
        role: str,
        content: str,
        importance: str | None,
        attachments: Sequence[Attachment] = (),
    ) -> dict[str, Any]:
        """Append one message (and its attachments, each file's bytes stored once by sha256) at the session's
        next position; returns the row once it is committed."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        created = time.time()
        with self._transaction(write=True) as db:
            taken = db.execute(
                "UPDATE sessions SET next_seq = next_seq + 1 WHERE id = ? RETURNING next_seq - 1", (session_id,)
            ).fetchall()
            if not taken:
                raise UnknownSession(session_id)
            seq = int(taken[0][0])
            db.execute(
                "INSERT INTO messages (session_id, seq, message_id, role, content, importance, created, attachments) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, seq, message_id, role, content, importance, created, len(attachments)),
            )
            self._insert_attachments(db, session_id, seq, attachments)
        return {
            "session_id": session_id,
            "seq": seq,
            "id": message_id,
            "role": role,
            "content": content,
            "importance": importance,
            "created": created,
            "attachments": tuple(attachments),
        }

    @staticmethod
    def _insert_attachments(db: Executor, session_id: str, seq: int, attachments: Sequence[Attachment]) -> None:
        for position, a in enumerate(attachments):
            sha256 = None if a.is_reference else a.sha256
            if sha256 is not None:
                db.execute(
                    "INSERT INTO attachments (sha256, data) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING",
                    (sha256, a.data),
                )
            db.execute(
                "INSERT INTO message_attachments (session_id, seq, position, part, sha256, url, detail, filename) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, seq, position, a.part, sha256, a.url or None, a.detail, a.filename),
            )

    def messages_since(self, session_id: str, since: int = 0) -> tuple[int, list[dict[str, Any]]] | None:
        """The session's message count and its messages from position ``since`` on, in order; ``None``
        when there is no such session. A worker calls it to catch up with what others appended."""
        if not valid_session_id(session_id):
            return None
        with self._transaction(write=False) as db:  # one round trip: this runs before every use of a session
            rows = db.execute(
                "SELECT s.next_seq, m.seq, m.message_id, m.role, m.content, m.importance, m.created, m.attachments "
                "FROM sessions s LEFT JOIN messages m ON m.session_id = s.id AND m.seq >= ? "
                "WHERE s.id = ? ORDER BY m.seq",
                (since, session_id),
            ).fetchall()
            parts: dict[int, list[Attachment]] = {}
            if any(r[7] for r in rows if r[1] is not None):  # a second read only when there are parts
                for r in db.execute(
                    "SELECT ma.seq, ma.part, ma.url, ma.detail, ma.filename, a.data FROM message_attachments ma "
                    "LEFT JOIN attachments a ON a.sha256 = ma.sha256 WHERE ma.session_id = ? AND ma.seq >= ? "
                    "ORDER BY ma.seq, ma.position",
                    (session_id, since),
                ).fetchall():
                    parts.setdefault(int(r[0]), []).append(_attachment(r[1:]))
        if not rows:
            return None
        found = [_message_row(r[1:]) for r in rows if r[1] is not None]
        return int(rows[0][0]), [{**row, "attachments": tuple(parts.get(row["seq"], ()))} for row in found]

    # ------------------------------------------------------------------ CacheBackend

    def load_artifact(self, kind: str, key: str) -> bytes | None:
        with self._transaction(write=False) as db:
            row = db.execute("SELECT blob FROM artifacts WHERE kind = ? AND key = ?", (kind, key)).fetchone()
        return bytes(row[0]) if row else None

    def save_artifact(self, kind: str, key: str, data: bytes) -> None:
        # Not durable on its own: an artifact is derived data, and the message row that needs it commits
        # after it, durably, which (write-ahead logs being sequential) makes it durable too.
        with self._transaction(write=True, durable=False) as db:
            db.execute(
                "INSERT INTO artifacts (kind, key, blob) VALUES (?, ?, ?) "
                "ON CONFLICT (kind, key) DO UPDATE SET blob = excluded.blob",
                (kind, key, bytes(data)),
            )
