"""The session store behind ``afm-local serve``: sessions, their messages, and the artifact cache.

One protocol (``Store``), one schema (``schema.py``, named migrations), the queries written once
(``sql.py``), two backends: SQLite, embedded and the default (``sqlite.py``), and PostgreSQL, shared
by several workers on several hosts (``postgres.py``, the ``postgres`` extra). ``open_store`` picks
one from ``--db``: a ``postgresql://`` URL, or a file path.

A message's images and files are stored with it, each file's bytes once by sha256 (``attachments``),
and come back in its row as ``Attachment`` records; deleting a session deletes the files no other
message sends. Artifacts (``artifacts(kind, key, blob)``) implement ``engine.cache.CacheBackend``: keys
are ``"<component>:<sha256 of the text>"``, shared between sessions, containing no text; deleting a
session removes its messages but not artifacts that other sessions may share.

Session ids are random (``secrets.token_urlsafe``), validated by ``SESSION_ID_RE`` and only ever
used as SQL parameters, never in paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from ...core.errors import StoreError
from ...core.parts import Attachment
from .sql import SESSION_ID_RE, new_session_id, valid_session_id
from .sqlite import SQLiteStore
from .url import is_postgres_url, redact_url

__all__ = [
    "SESSION_ID_RE",
    "SQLiteStore",
    "Store",
    "is_postgres_url",
    "new_session_id",
    "open_store",
    "redact_url",
    "valid_session_id",
]


class Store(Protocol):
    """What the server needs from a session store. Writes return only once committed (durable)."""

    description: str

    def create_session(self) -> dict[str, Any]: ...

    def get_session(self, session_id: str) -> dict[str, Any] | None: ...

    def list_sessions(self, limit: int = 100) -> list[dict[str, Any]]: ...

    def delete_session(self, session_id: str) -> bool: ...

    def append_message(
        self,
        session_id: str,
        message_id: str,
        role: str,
        content: str,
        importance: str | None,
        attachments: Sequence[Attachment] = (),
    ) -> dict[str, Any]: ...

    def messages_since(self, session_id: str, since: int = 0) -> tuple[int, list[dict[str, Any]]] | None: ...

    def load_artifact(self, kind: str, key: str) -> bytes | None: ...

    def save_artifact(self, kind: str, key: str, data: bytes) -> None: ...

    def check(self) -> None: ...

    def close(self) -> None: ...


def open_store(db: str | Path, *, synchronous: str = "NORMAL", pool_size: int = 4) -> Store:
    """The store ``db`` names, opened and migrated. Errors are ``AFMError``s with a one-line message."""
    if not is_postgres_url(db):
        return SQLiteStore(db, synchronous=synchronous)
    try:
        from .postgres import PostgresStore
    except ImportError as exc:
        if (exc.name or "psycopg").split(".")[0] not in ("psycopg", "psycopg_pool"):
            raise
        raise StoreError(
            f"--db {redact_url(str(db))} needs PostgreSQL support, which is not installed: "
            f"pip install 'afm-local[postgres]' (or scripts/setup.sh dev)"
        ) from None
    return PostgresStore(str(db), pool_size=pool_size)
