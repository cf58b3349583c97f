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
    """One named step; ``sql`` holds ``;``-separated statements with dialect placeholders. A step for
    some dialects only (``dialects``) is still recorded as applied by the others, with nothing run."""

    name: str
    sql: str
    dialects: tuple[str, ...] = ("sqlite", "postgresql")

    def statements(self, dialect: str) -> list[str]:
        if dialect not in self.dialects:
            return []
        text = self.sql.format(**TYPES[dialect])
        return [s.strip() for s in text.split(";") if s.strip()]


TYPES: dict[str, dict[str, str]] = {
    "sqlite": {
        "real": "REAL",
        "blob": "BLOB",
        "without_rowid": "WITHOUT ROWID",
        "octets": "LENGTH(CAST(content AS BLOB))",
    },
    "postgresql": {"real": "DOUBLE PRECISION", "blob": "BYTEA", "without_rowid": "", "octets": "OCTET_LENGTH(content)"},
}
TENANT_TABLES = ("sessions", "messages", "artifacts")  # every row of these belongs to one tenant

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
    # Tenants. Every session, message and artifact carries its tenant, and every statement on them names
    # it (store/tenant.py); what was stored before belongs to the one-tenant default ("default", the
    # tenant of --api-key-env). ``bytes`` is a session's content size, for the per-tenant quota.
    # Artifacts now belong to the session that made them (erasing a session erases them, see
    # docs/server.md); the old shared rows cannot be given an owner, so they go: they are derived data,
    # and a session restored afterwards computes its artifacts again once. API keys are stored as
    # sha256 digests under a public key id.
    Migration(
        "m004_tenants",
        """
        ALTER TABLE sessions ADD COLUMN tenant_id TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE sessions ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET bytes = (SELECT COALESCE(SUM({octets}), 0) FROM messages
                                     WHERE messages.session_id = sessions.id);
        CREATE INDEX sessions_by_tenant ON sessions(tenant_id, created);
        ALTER TABLE messages ADD COLUMN tenant_id TEXT NOT NULL DEFAULT 'default';
        DROP TABLE artifacts;
        CREATE TABLE artifacts (
            tenant_id   TEXT NOT NULL,
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            kind        TEXT NOT NULL,
            key         TEXT NOT NULL,
            blob        {blob} NOT NULL,
            PRIMARY KEY (tenant_id, session_id, kind, key)
        ) {without_rowid};
        CREATE INDEX artifacts_by_key ON artifacts(tenant_id, kind, key);
        CREATE TABLE api_keys (
            key_id     TEXT PRIMARY KEY,
            tenant_id  TEXT NOT NULL,
            digest     TEXT NOT NULL,
            created    {real} NOT NULL,
            revoked    {real}
        )
    """,
    ),
    # PostgreSQL enforces the tenant itself: row-level security on every tenant table, forced on the
    # owner too, against the tenant each transaction sets (``SET LOCAL app.tenant``, postgres.py). A
    # transaction that sets none sees no row. A superuser bypasses any policy, so the store then runs
    # tenant transactions as the role ``afm_local_tenant`` (postgres.py makes it).
    Migration(
        "m005_row_level_security",
        ";".join(
            f"""
            ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
            ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
            CREATE POLICY tenant_rows ON {table}
                USING (tenant_id = current_setting('app.tenant', true))
                WITH CHECK (tenant_id = current_setting('app.tenant', true))
            """
            for table in TENANT_TABLES
        ),
        dialects=("postgresql",),
    ),
)

MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied {real} NOT NULL)"
