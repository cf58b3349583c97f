"""One tenant's view of the store: every statement on sessions, messages, attachments and artifacts names
the tenant.

The scoping lives here, in the store, and nowhere else: a route holds a ``TenantStore`` for the key that
called it and has no way to name another tenant's rows. On PostgreSQL the same tenant is also set on
the transaction, and row-level security admits only its rows (postgres.py), so a statement that forgot
its ``tenant_id`` would still see nothing of anyone else's.

Artifacts belong to the session whose messages made them: erasing a session erases them, whatever
their kind. A session that needs an artifact another session of the same tenant already made copies
it (``load_artifact``), so sharing within a tenant costs a row, not a model run. Nothing is shared
between tenants (docs/server.md says why). An artifact is only written while its session exists: one
that a background job finishes after its session was erased is dropped.

A message's images and files are stored with it: each file's bytes once per tenant by sha256
(``attachments``), the message's parts in order (``message_attachments``). Erasing a session erases its
parts and the tenant's files that no other of its messages sends; nothing is shared between tenants.

Quotas (``Quota``) are checked in the writing transaction from the tenant's session rows (their
``next_seq`` and ``bytes``; a message's bytes are its text's and its attachments'). On SQLite writers
take turns, so the check is exact; on PostgreSQL two appends racing on different sessions may both pass,
so a quota can be overrun by the number of requests in flight.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core.errors import QuotaExceeded, UnknownSession
from ...core.parts import Attachment
from ...core.turns import Turn, as_turn
from .base import Executor, Transactions, new_session_id, valid_session_id

ARTIFACT_OWN = "SELECT blob FROM artifacts WHERE tenant_id = ? AND session_id = ? AND kind = ? AND key = ?"
ARTIFACT_OWNER = "SELECT session_id FROM artifacts WHERE tenant_id = ? AND kind = ? AND key = ? LIMIT 1"
# engine.cache's kinds keyed by a file's sha256 (the key's last 64 characters, after its component's name)
FILE_ARTIFACTS = ("media", "ocr", "document_text", "pages", "thumbnail")
SWEEP_ORPHANS = (
    "DELETE FROM artifacts WHERE tenant_id = ? AND kind IN ({}) AND NOT EXISTS ("
    "SELECT 1 FROM message_attachments ma WHERE ma.tenant_id = artifacts.tenant_id "
    "AND ma.session_id = artifacts.session_id AND ma.sha256 = SUBSTR(artifacts.key, LENGTH(artifacts.key) - 63))"
).format(", ".join(f"'{kind}'" for kind in FILE_ARTIFACTS))


@dataclass(frozen=True, slots=True)
class Quota:
    """What one tenant may store; ``None`` is no limit."""

    sessions: int | None = None
    messages: int | None = None
    bytes: int | None = None


def _message_row(r: Any) -> dict[str, Any]:
    return {"seq": r[0], "id": r[1], "role": r[2], "content": r[3], "importance": r[4], "created": r[5]}


def _attachment(r: Sequence[Any]) -> Attachment:
    """A stored part (``part, url, detail, filename, data``) as the record a turn carries."""
    return Attachment(r[0], bytes(r[4]) if r[4] is not None else b"", r[1] or "", r[2], r[3])


class TenantStore:
    """Sessions, messages and artifacts of one tenant; safe to share between threads."""

    def __init__(self, store: Transactions, tenant: str, quota: Quota) -> None:
        self._store, self.tenant, self.quota = store, tenant, quota

    def _tx(self, *, write: bool, durable: bool = True) -> Any:
        return self._store._transaction(write=write, durable=durable, tenant=self.tenant)

    # ------------------------------------------------------------------ sessions

    def create_session(self) -> dict[str, Any]:
        session_id, created = new_session_id(), time.time()
        with self._tx(write=True) as db:
            if self.quota.sessions is not None:
                (count,) = db.execute("SELECT COUNT(*) FROM sessions WHERE tenant_id = ?", (self.tenant,)).fetchone()
                if int(count) >= self.quota.sessions:
                    raise QuotaExceeded(f"this tenant already has {count} sessions, its quota (--quota-sessions)")
            db.execute(
                "INSERT INTO sessions (id, tenant_id, created) VALUES (?, ?, ?)", (session_id, self.tenant, created)
            )
        return {"id": session_id, "created": created}

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        if not valid_session_id(session_id):
            return None
        with self._tx(write=False) as db:
            row = db.execute(
                "SELECT id, created, next_seq FROM sessions WHERE tenant_id = ? AND id = ?", (self.tenant, session_id)
            ).fetchone()
        return {"id": row[0], "created": row[1], "messages": row[2]} if row else None

    def list_sessions(self, limit: int = 100) -> list[dict[str, Any]]:
        with self._tx(write=False) as db:
            rows = db.execute(
                "SELECT id, created, next_seq FROM sessions WHERE tenant_id = ? ORDER BY created DESC LIMIT ?",
                (self.tenant, int(limit)),
            ).fetchall()
        return [{"id": r[0], "created": r[1], "messages": r[2]} for r in rows]

    def usage(self) -> dict[str, int]:
        with self._tx(write=False) as db:
            return _usage(db, self.tenant)

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
        """Append one message (and its attachments) at the session's next position; returns the row once it
        is committed."""
        turn = as_turn(
            {"role": role, "content": content, "importance": importance, "id": message_id, "attachments": attachments}
        )
        return self.append_messages(session_id, [turn])[0]

    def append_messages(self, session_id: str, turns: Sequence[Turn]) -> list[dict[str, Any]]:
        """Append messages (each with its ``id`` set, and its attachments) at the session's next positions in
        one transaction: every one is committed, or none. Returns the rows once they are committed."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        created = time.time()
        sizes = [_size(t.content, t.attachments) for t in turns]
        rows = []
        with self._tx(write=True) as db:
            self._check_room(db, sum(sizes), len(turns))
            for turn, size in zip(turns, sizes):
                taken = db.execute(
                    "UPDATE sessions SET next_seq = next_seq + 1, bytes = bytes + ? WHERE tenant_id = ? AND id = ? "
                    "RETURNING next_seq - 1",
                    (size, self.tenant, session_id),
                ).fetchall()
                if not taken:
                    raise UnknownSession(session_id)
                seq = int(taken[0][0])
                importance = turn.importance.value if turn.importance is not None else None
                db.execute(
                    "INSERT INTO messages (tenant_id, session_id, seq, message_id, role, content, importance, "
                    "created, attachments) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        self.tenant,
                        session_id,
                        seq,
                        turn.id,
                        turn.role,
                        turn.content,
                        importance,
                        created,
                        len(turn.attachments),
                    ),
                )
                self._insert_attachments(db, session_id, seq, turn.attachments)
                rows.append(
                    {
                        "session_id": session_id,
                        "seq": seq,
                        "id": turn.id,
                        "role": turn.role,
                        "content": turn.content,
                        "importance": importance,
                        "created": created,
                        "attachments": turn.attachments,
                    }
                )
        return rows

    def _insert_attachments(self, db: Executor, session_id: str, seq: int, attachments: Sequence[Attachment]) -> None:
        """Each file's bytes once per tenant by sha256, then the message's parts in order."""
        for position, a in enumerate(attachments):
            sha256 = None if a.is_reference else a.sha256
            if sha256 is not None:
                db.execute(
                    "INSERT INTO attachments (tenant_id, sha256, data) VALUES (?, ?, ?) "
                    "ON CONFLICT (tenant_id, sha256) DO NOTHING",
                    (self.tenant, sha256, a.data),
                )
            db.execute(
                "INSERT INTO message_attachments (tenant_id, session_id, seq, position, part, sha256, url, detail, "
                "filename) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (self.tenant, session_id, seq, position, a.part, sha256, a.url or None, a.detail, a.filename),
            )

    def check_room(self, turns: Sequence[Turn]) -> None:
        """``QuotaExceeded`` when these messages (their text and attachments) would not fit the tenant's quota
        now: for a caller to ask before it derives anything from them (the append checks again, exactly, in
        its transaction)."""
        if self.quota.messages is None and self.quota.bytes is None:
            return
        with self._tx(write=False) as db:
            self._check_room(db, sum(_size(t.content, t.attachments) for t in turns), len(turns))

    def _check_room(self, db: Executor, size: int, count: int = 1) -> None:
        if self.quota.messages is None and self.quota.bytes is None:
            return
        used = _usage(db, self.tenant)
        if self.quota.messages is not None and used["messages"] + count > self.quota.messages:
            raise QuotaExceeded(
                f"this tenant stores {used['messages']} messages; {count} more would pass its quota of "
                f"{self.quota.messages} (--quota-messages)"
            )
        if self.quota.bytes is not None and used["bytes"] + size > self.quota.bytes:
            raise QuotaExceeded(
                f"{'this message' if count == 1 else f'these {count} messages'} ({size} bytes, attachments "
                f"included) would take the tenant past its {self.quota.bytes} bytes (--quota-bytes)"
            )

    def messages_since(self, session_id: str, since: int = 0) -> tuple[int, list[dict[str, Any]]] | None:
        """The session's message count and its messages from position ``since`` on, in order; ``None``
        when the tenant has no such session. A worker calls it to catch up with what others appended."""
        if not valid_session_id(session_id):
            return None
        with self._tx(write=False) as db:  # one round trip: this runs before every use of a session
            rows = db.execute(
                "SELECT s.next_seq, m.seq, m.message_id, m.role, m.content, m.importance, m.created, m.attachments "
                "FROM sessions s LEFT JOIN messages m ON m.tenant_id = s.tenant_id AND m.session_id = s.id "
                "AND m.seq >= ? WHERE s.tenant_id = ? AND s.id = ? ORDER BY m.seq",
                (since, self.tenant, session_id),
            ).fetchall()
            parts = self._parts(db, session_id, since) if any(r[7] for r in rows if r[1] is not None) else {}
        if not rows:
            return None
        found = [_message_row(r[1:]) for r in rows if r[1] is not None]
        return int(rows[0][0]), [{**row, "attachments": tuple(parts.get(row["seq"], ()))} for row in found]

    def _parts(self, db: Executor, session_id: str, since: int) -> dict[int, list[Attachment]]:
        """The attachments of the session's messages from ``since`` on, by seq (a second read, only when the
        message rows say there are some)."""
        parts: dict[int, list[Attachment]] = {}
        for r in db.execute(
            "SELECT ma.seq, ma.part, ma.url, ma.detail, ma.filename, a.data FROM message_attachments ma "
            "LEFT JOIN attachments a ON a.tenant_id = ma.tenant_id AND a.sha256 = ma.sha256 "
            "WHERE ma.tenant_id = ? AND ma.session_id = ? AND ma.seq >= ? ORDER BY ma.seq, ma.position",
            (self.tenant, session_id, since),
        ).fetchall():
            parts.setdefault(int(r[0]), []).append(_attachment(r[1:]))
        return parts

    # ------------------------------------------------------------------ artifacts

    def load_artifact(self, session_id: str, kind: str, key: str) -> bytes | None:
        """The session's artifact, else a copy of the same artifact from another of the tenant's sessions.
        Two indexed lookups (``ARTIFACT_OWN``: the primary key; ``ARTIFACT_OWNER``: ``artifacts_by_key``,
        covering), never a scan of the tenant's artifacts."""
        with self._tx(write=False) as db:
            row = db.execute(ARTIFACT_OWN, (self.tenant, session_id, kind, key)).fetchone()
            if row is not None:
                return bytes(row[0])
            owner = db.execute(ARTIFACT_OWNER, (self.tenant, kind, key)).fetchone()
            row = db.execute(ARTIFACT_OWN, (self.tenant, owner[0], kind, key)).fetchone() if owner else None
        if row is None:
            return None
        self.save_artifact(session_id, kind, key, bytes(row[0]))
        return bytes(row[0])

    def sweep_orphans(self) -> int:
        """Delete the artifacts derived from a file that no message of their session sends (the OCR text,
        document text, pages, thumbnail and type of a file whose message was refused, or lost in a crash,
        after they were made); returns how many. Derived data only: a file sent again reads them anew."""
        with self._tx(write=True) as db:
            return int(db.execute(SWEEP_ORPHANS, (self.tenant,)).rowcount or 0)

    def save_artifact(self, session_id: str, kind: str, key: str, data: bytes) -> None:
        # Not durable on its own: an artifact is derived data, and the message row that needs it commits
        # after it, durably, which (write-ahead logs being sequential) makes it durable too.
        try:
            with self._tx(write=True, durable=False) as db:
                db.execute(
                    "INSERT INTO artifacts (tenant_id, session_id, kind, key, blob) SELECT ?, ?, ?, ?, ? "
                    "WHERE EXISTS (SELECT 1 FROM sessions WHERE tenant_id = ? AND id = ?) "
                    "ON CONFLICT (tenant_id, session_id, kind, key) DO UPDATE SET blob = excluded.blob",
                    (self.tenant, session_id, kind, key, bytes(data), self.tenant, session_id),
                )
        except UnknownSession:
            pass  # the session was erased while this artifact was being made: it must not come back

    # ------------------------------------------------------------------ erasure

    def erase_session(self, session_id: str) -> bool:
        """Delete the session, its messages, their attachments (the files no other message of the tenant
        sends) and its artifacts, then scrub the freed bytes; ``False`` when the tenant has no such session."""
        if not valid_session_id(session_id):
            return False
        with self._tx(write=True) as db:
            tables = (("artifacts", "session_id"), ("message_attachments", "session_id"), ("messages", "session_id"))
            for table, column in (*tables, ("sessions", "id")):
                deleted = db.execute(
                    f"DELETE FROM {table} WHERE tenant_id = ? AND {column} = ?", (self.tenant, session_id)
                ).rowcount
            db.execute(
                "DELETE FROM attachments WHERE tenant_id = ? AND NOT EXISTS (SELECT 1 FROM message_attachments ma "
                "WHERE ma.tenant_id = attachments.tenant_id AND ma.sha256 = attachments.sha256)",
                (self.tenant,),
            )
        if deleted:
            self._store.scrub()
        return deleted > 0

    def erase(self) -> int:
        """Delete every session, message, attachment and artifact of the tenant, then scrub; returns the
        sessions erased."""
        with self._tx(write=True) as db:
            for table in ("artifacts", "message_attachments", "attachments", "messages", "sessions"):
                deleted = db.execute(f"DELETE FROM {table} WHERE tenant_id = ?", (self.tenant,)).rowcount
        self._store.scrub()
        return int(deleted)


def _size(content: str, attachments: Sequence[Attachment]) -> int:
    """What a message counts in the quota: its text's UTF-8 bytes and its files' bytes."""
    return len(content.encode("utf-8", "surrogatepass")) + sum(len(a.data) for a in attachments)


def _usage(db: Executor, tenant: str) -> dict[str, int]:
    sessions, messages, size = db.execute(
        "SELECT COUNT(*), COALESCE(SUM(next_seq), 0), COALESCE(SUM(bytes), 0) FROM sessions WHERE tenant_id = ?",
        (tenant,),
    ).fetchone()
    return {"sessions": int(sessions), "messages": int(messages), "bytes": int(size)}
