"""The store's operations, written once in SQL that SQLite and PostgreSQL both run.

``SQLStore`` holds the migration runner and hands out the two views every query goes through: one
tenant's (``tenant(name)``, store/tenant.py: sessions, messages, artifacts, erasure) and the API keys
(``keys``, store/keys.py). A backend supplies ``_transaction`` (a connection inside a transaction, with
its driver's errors translated to ``StoreError`` classes, its own durability checks and, on
PostgreSQL, the tenant that row-level security admits), ``scrub``, ``check`` and ``close``. The shared
SQL uses ``?`` placeholders, which the PostgreSQL backend rewrites for psycopg.

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

import logging
import secrets
import time
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import ClassVar, NoReturn

from ...core.errors import AFMError, StoreError
from .base import Executor
from .keys import KeyTable
from .schema import MIGRATIONS, MIGRATIONS_TABLE, TYPES
from .tenant import Quota, TenantStore

log = logging.getLogger("afm_local.server")


class SQLStore(ABC):
    """Sessions, messages and artifacts over one SQL database; safe to share between threads."""

    dialect: ClassVar[str]
    description: str  # the file, or the URL without its password: what logs and errors may show
    store_id: str | None = None  # the database's random identity (``store_meta``), read when it is opened

    @abstractmethod
    def _transaction(
        self, *, write: bool, durable: bool = True, tenant: str | None = None
    ) -> AbstractContextManager[Executor]:
        """A connection in a transaction that commits when the block ends. ``durable=False`` marks a
        write that may be lost in a crash without harm (a derived artifact): a backend may then skip
        waiting for the disk. ``tenant`` is the tenant the statements are for: PostgreSQL's row-level
        security admits only its rows, and none without it. Driver errors leave as ``StoreError``
        classes; a foreign key that no longer holds (the session was erased meanwhile) as
        ``UnknownSession``."""

    @abstractmethod
    def _translate(self, exc: Exception) -> AFMError | None:
        """The ``AFMError`` a driver error stands for (a store error, a session gone, input the database cannot
        hold), or ``None`` when it is not a known one (a bug)."""

    def _raise_translated(self, exc: Exception) -> NoReturn:
        """Raise the ``AFMError`` a driver error stands for (``_translate``), else the driver error itself."""
        translated = self._translate(exc)
        if translated is None:
            raise exc
        raise translated from exc

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
            self._after_migrations(db)
            return str(db.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()[0])

    def _after_migrations(self, db: Executor) -> None:
        """Backend work in the migration's transaction, under its lock (PostgreSQL: the tenant role)."""

    # ------------------------------------------------------------------ tenants and keys

    def tenant(self, tenant_id: str, quota: Quota | None = None) -> TenantStore:
        """The store as one tenant sees it: every statement scoped to ``tenant_id`` (store/tenant.py). The
        first time a process opens a tenant, its orphaned file artifacts are swept (``sweep_orphans``: the
        start-up repair of writes refused or cut short after their artifacts were made)."""
        view = TenantStore(self, tenant_id, quota or Quota())
        swept_tenants = self.__dict__.setdefault("_swept", set())
        if tenant_id not in swept_tenants:
            try:
                swept = view.sweep_orphans()
            except StoreError as exc:  # tried again at the tenant's next request; the request itself decides
                log.warning("could not sweep the orphaned artifacts of tenant %s: %s", tenant_id, exc)
                return view
            swept_tenants.add(tenant_id)
            if swept:
                log.info(
                    "removed %d orphaned file artifacts of tenant %s (refused or interrupted writes)", swept, tenant_id
                )
        return view

    @property
    def keys(self) -> KeyTable:
        """The API keys (hashed), looked up before any tenant is known (store/keys.py)."""
        return KeyTable(self)

    @abstractmethod
    def scrub(self) -> None:
        """After an erasure committed: make the deleted bytes unreadable in the database's files, as far as
        the backend can (SQLite: checkpoint and truncate the WAL; PostgreSQL: VACUUM)."""
