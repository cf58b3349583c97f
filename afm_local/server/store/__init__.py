"""The session store behind ``afm-local serve``: tenants' sessions, their messages, their artifacts, and
the API keys.

One protocol (``Store``), one schema (``schema.py``, named migrations), the queries written once
(``tenant.py`` for everything a tenant owns, ``keys.py`` for the keys, ``sql.py`` for migrations), two
backends: SQLite, embedded and the default (``sqlite.py``, optionally encrypted with SQLCipher), and
PostgreSQL, shared by several workers on several hosts (``postgres.py``, the ``postgres`` extra, with
row-level security per tenant). ``open_store`` picks one from ``--db``: a ``postgresql://`` URL, or a
file path.

Every tenant-owned statement goes through ``store.tenant(name)``, which names the tenant in each of
them. A message's images and files are stored with it, each file's bytes once per tenant by sha256
(``attachments``), and come back in its row as ``Attachment`` records. Artifacts
(``artifacts(tenant_id, session_id, kind, key, blob)``) back one session's ``engine.cache.ArtifactCache``
(``server.state.SessionArtifacts``): keys are ``"<component>:<sha256 of the text>"``; erasing a session
erases its artifacts and its attachments.

Session ids are random (``secrets.token_urlsafe``), validated by ``SESSION_ID_RE`` and only ever
used as SQL parameters, never in paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ...core.errors import InvalidInput, StoreError, missing_extra
from .base import DEFAULT_TENANT, SESSION_ID_RE, new_session_id, valid_session_id, valid_tenant
from .keys import KeyTable, StoredKey
from .sqlite import SQLiteStore
from .tenant import Quota, TenantStore
from .url import is_postgres_url, redact_url

__all__ = [
    "DEFAULT_TENANT",
    "SESSION_ID_RE",
    "KeyTable",
    "Quota",
    "SQLiteStore",
    "Store",
    "StoredKey",
    "TenantStore",
    "is_postgres_url",
    "new_session_id",
    "open_store",
    "redact_url",
    "valid_session_id",
    "valid_tenant",
]


class Store(Protocol):
    """What the server needs from a store. Writes return only once committed (durable)."""

    description: str

    def tenant(self, tenant_id: str, quota: Quota | None = None) -> TenantStore: ...

    @property
    def keys(self) -> KeyTable: ...

    def scrub(self) -> None: ...

    def check(self) -> None: ...

    def close(self) -> None: ...


def open_store(
    db: str | Path, *, synchronous: str = "NORMAL", pool_size: int = 4, encryption_key: str | None = None
) -> Store:
    """The store ``db`` names, opened and migrated. Errors are ``AFMError``s with a one-line message.
    ``encryption_key`` opens (or creates) a SQLCipher-encrypted SQLite file."""
    if not is_postgres_url(db):
        return SQLiteStore(db, synchronous=synchronous, encryption_key=encryption_key, pool_size=pool_size)
    if encryption_key is not None:
        raise InvalidInput(
            "--db-key-env encrypts the SQLite store; for PostgreSQL use the server's own encryption at rest "
            "(docs/server.md, Encryption at rest)"
        )
    try:
        from .postgres import PostgresStore
    except ImportError as exc:
        if not (missing_extra(exc, "psycopg", "psycopg_pool") or exc.name is None):  # None: psycopg's own libpq check
            raise
        raise StoreError(
            f"--db {redact_url(str(db))} needs PostgreSQL support, which is not installed: "
            f"pip install 'afm-local[postgres]' (or scripts/setup.sh dev)"
        ) from None
    return PostgresStore(str(db), pool_size=pool_size)
