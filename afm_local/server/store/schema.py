"""The one schema of the session store, as named migrations that SQLite and PostgreSQL both run.

Each migration has a name and SQL written once; the few words the two dialects spell differently are
placeholders (``{real}``, ``{blob}``, ``{without_rowid}``) filled from ``TYPES``. The table
``_migrations(name, applied)`` records what a database has; opening it applies the missing ones in
order, in one transaction, and refuses a database that records a migration this release does not
know (it was written by a newer afm-local and could be misread).

To change the schema, append a migration with a new name; never edit or reorder an applied one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One named step; ``sql`` holds ``;``-separated statements with dialect placeholders."""

    name: str
    sql: str

    def statements(self, dialect: str) -> list[str]:
        text = self.sql.format(**TYPES[dialect])
        return [s.strip() for s in text.split(";") if s.strip()]


TYPES: dict[str, dict[str, str]] = {
    "sqlite": {"real": "REAL", "blob": "BLOB", "without_rowid": "WITHOUT ROWID"},
    "postgresql": {"real": "DOUBLE PRECISION", "blob": "BYTEA", "without_rowid": ""},
}

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "m001_initial",
        """
        CREATE TABLE sessions (
            id       TEXT PRIMARY KEY,
            created  {real} NOT NULL
        );
        CREATE TABLE messages (
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq         INTEGER NOT NULL,
            message_id  TEXT NOT NULL,
            role        TEXT NOT NULL,
            content     TEXT NOT NULL,
            importance  TEXT,
            created     {real} NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        CREATE UNIQUE INDEX messages_by_id ON messages(session_id, message_id);
        CREATE TABLE artifacts (
            kind  TEXT NOT NULL,
            key   TEXT NOT NULL,
            blob  {blob} NOT NULL,
            PRIMARY KEY (kind, key)
        ) {without_rowid}
    """,
    ),
    # The next message's seq, kept on the session row: an append increments it in the same transaction
    # as its insert, so concurrent appends (any number of processes) serialise on that one row and the
    # order stays total and gap-free. Its value is also the session's message count.
    Migration(
        "m002_session_next_seq",
        """
        ALTER TABLE sessions ADD COLUMN next_seq INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET next_seq = (SELECT COALESCE(MAX(seq) + 1, 0) FROM messages
                                        WHERE messages.session_id = sessions.id)
    """,
    ),
    # A random id written once when the store is created: a worker that finds another id behind its
    # connection string talks to a replaced database and refuses it.
    Migration(
        "m003_store_meta",
        """
        CREATE TABLE store_meta (
            key    TEXT PRIMARY KEY,
            value  TEXT NOT NULL
        )
    """,
    ),
    # Images and files of messages: each file's bytes stored once by sha256 (shared by every message and
    # session that sends it), a message's parts in order in message_attachments (an http(s) image is a
    # URL, no bytes), and a count on the message row so that catching up reads the parts only when there
    # are some. Deleting a session deletes its parts, and the files no other message refers to.
    Migration(
        "m004_attachments",
        """
        CREATE TABLE attachments (
            sha256  TEXT PRIMARY KEY,
            data    {blob} NOT NULL
        );
        CREATE TABLE message_attachments (
            session_id  TEXT NOT NULL,
            seq         INTEGER NOT NULL,
            position    INTEGER NOT NULL,
            part        TEXT NOT NULL,
            sha256      TEXT REFERENCES attachments(sha256),
            url         TEXT,
            detail      TEXT NOT NULL,
            filename    TEXT NOT NULL,
            PRIMARY KEY (session_id, seq, position),
            FOREIGN KEY (session_id, seq) REFERENCES messages(session_id, seq) ON DELETE CASCADE
        );
        CREATE INDEX message_attachments_by_file ON message_attachments(sha256);
        ALTER TABLE messages ADD COLUMN attachments INTEGER NOT NULL DEFAULT 0
    """,
    ),
)

MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied {real} NOT NULL)"
