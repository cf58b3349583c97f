"""The shared store: PostgreSQL through psycopg 3 and a psycopg_pool connection pool.

Every ``afm-local serve`` worker, on any host, opens the same database: sessions, messages and the
artifact cache live there, so any worker answers for any session. Needs the ``postgres`` extra
(``pip install 'afm-local[postgres]'``).

Durability
    Pooled connections run with ``synchronous_commit=off``, and every transaction that the server
    acknowledges (session created or deleted, message appended) sets it back ``on`` for itself: its
    ``COMMIT`` returns once the write-ahead log is flushed (and replicated, where the operator asked
    for synchronous standbys). Artifacts are single statements committed without waiting; the message
    row that needs them commits after them, and its flush covers theirs.

Identity
    Migrations write a random ``store_id`` once. Every new pooled connection reads it back before it is
    used, and the health check reads it on a live one: a database dropped and created again under the
    same name (or a connection string now pointing elsewhere) is detected, and the store refuses all
    work from then on. A backup restored with its data keeps its id and is accepted.

Errors
    By class: ``DiskFull`` (SQLSTATE 53100) is ``StoreFull``; a connection that fails or cannot be had
    within the pool's timeout, a read-only server or transaction, missing privileges or tables, and
    PostgreSQL's internal errors are ``StoreUnavailable``. A pooled connection that a server restart
    broke fails the one request that uses it next (503, before anything is written) and is replaced;
    checking every connection as it leaves the pool would cost a round trip on every store call. No
    write is ever retried (a retried append could store a message twice).

Tenants
    Every transaction for a tenant sets it (``set_config('app.tenant', ..., true)``, local to that
    transaction, so a pooled connection carries nothing to its next user), and row-level security on
    the tenant tables (migration ``m005_row_level_security``) admits only that tenant's rows; a
    transaction that sets none sees none. Policies do not bind a superuser or a role with
    ``BYPASSRLS``: connected as one, the store creates the role ``afm_local_tenant`` (no login, no
    bypass; data privileges on the tenant tables only) and runs tenant transactions as it
    (``set_config('role', ...)``, also transaction-local).

Erasure
    ``scrub`` runs ``VACUUM`` on the tenant tables after an erasure, so the dead rows' space is
    reclaimed. PostgreSQL cannot promise more: vacuumed pages may keep old bytes until reused, and
    WAL segments, archives, replicas and backups keep what was written (docs/server.md).

The URL's password never reaches a log or an error message: ``description`` is the URL without it,
and driver messages are scrubbed of it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from ...core.errors import AFMError, InvalidInput, StoreFull, StoreUnavailable, UnknownSession
from .base import Executor
from .schema import TENANT_TABLES
from .sql import SQLStore
from .url import redact_url

log = logging.getLogger("afm_local.server")

MIGRATION_LOCK = 0x61666D2D6C6F63  # pg_advisory_xact_lock key held while migrating ("afm-loc")
CONNECT_TIMEOUT_S = 5
TENANT_ROLE = "afm_local_tenant"  # what tenant transactions run as when the login role bypasses row security
UNAVAILABLE = (
    psycopg.OperationalError,
    psycopg.InternalError,
    pg_errors.ReadOnlySqlTransaction,
    pg_errors.InsufficientPrivilege,
    pg_errors.UndefinedTable,
)


class _PgExecutor:
    """A psycopg connection that takes the ``?`` placeholders the shared SQL is written with."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), params)


class PostgresStore(SQLStore):
    """Sessions, messages and artifacts in one PostgreSQL database, shared by every worker."""

    dialect = "postgresql"

    def __init__(self, url: str, *, pool_size: int = 4, timeout_s: float = 5.0) -> None:
        self.description = redact_url(url)
        self._secrets = _passwords(url)
        self._timeout = timeout_s
        self._lost: str | None = None
        self._role: str | None = None  # TENANT_ROLE when the login role would bypass row-level security
        try:
            params = {
                "connect_timeout": str(CONNECT_TIMEOUT_S),
                "application_name": "afm-local",
                **conninfo_to_dict(url),
            }  # the URL's own settings win
            conninfo = make_conninfo("", **params)
        except psycopg.ProgrammingError as exc:
            raise InvalidInput(f"--db {self.description}: not a valid PostgreSQL URL ({self._scrub(exc)})") from None
        self._conninfo = conninfo
        self._probe()  # a clear one-line error (refused, wrong password, no such database) before the pool
        self._pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max(2, pool_size),
            timeout=timeout_s,
            kwargs={"autocommit": True},
            configure=self._configure,
            name="afm-local",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=timeout_s)
            self.store_id = self._migrate()
        except BaseException:
            self._pool.close()
            raise

    # ------------------------------------------------------------------ connections and transactions

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Every new pooled connection: session settings, then the identity check (see the module)."""
        conn.execute("SET synchronous_commit TO off")
        conn.execute("SET statement_timeout TO '30s'")
        if self.store_id is None:
            return  # still migrating: the id is being read or written
        try:
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()
        except pg_errors.UndefinedTable:
            row = None
        if row is None or row[0] != self.store_id:
            self._mark_lost()
            conn.close()
            raise StoreUnavailable(self._lost or "")

    def _mark_lost(self) -> None:
        if self._lost is None:
            self._lost = (
                f"the database behind {self.description} was replaced (its store id changed) since this "
                f"worker opened it; work is refused until a restart"
            )
            log.error("%s", self._lost)

    @contextmanager
    def _transaction(
        self, *, write: bool, durable: bool = True, tenant: str | None = None, timeout_s: float | None = None
    ) -> Iterator[Executor]:
        if self._lost is not None:
            raise StoreUnavailable(self._lost)
        settings = self._settings(write and durable, tenant)
        try:
            with self._pool.connection(timeout=timeout_s) as conn:
                if settings:
                    with conn.transaction():
                        names = ", ".join("set_config(%s, %s, true)" for _ in settings)
                        conn.execute(f"SELECT {names}", [v for pair in settings for v in pair])
                        yield _PgExecutor(conn)
                else:  # reads outside any tenant, and single-statement writes that commit on their own
                    yield _PgExecutor(conn)
        except (psycopg.Error, PoolTimeout) as exc:
            self._raise_translated(exc)

    def _settings(self, durable: bool, tenant: str | None) -> list[tuple[str, str]]:
        """The transaction-local settings one transaction needs, set in one round trip."""
        settings = [("synchronous_commit", "on")] if durable else []
        if tenant is not None:
            settings.append(("app.tenant", tenant))
            if self._role is not None:
                settings.append(("role", self._role))
        return settings

    def _translate(self, exc: Exception) -> AFMError | None:
        if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):  # the driver's own check, before sending
            return InvalidInput(
                "PostgreSQL text cannot hold a NUL (0x00) character: remove it from the message's text and file names"
            )
        if isinstance(exc, pg_errors.ForeignKeyViolation):
            return UnknownSession("the session is gone")
        if isinstance(exc, PoolTimeout):
            return StoreUnavailable(
                self._lost or f"no connection to PostgreSQL at {self.description} within {self._timeout:g} s"
            )
        if isinstance(exc, pg_errors.DiskFull):
            return StoreFull(f"PostgreSQL at {self.description} has no disk space left; nothing was written")
        if isinstance(exc, UNAVAILABLE):
            return StoreUnavailable(f"PostgreSQL at {self.description}: {self._scrub(exc)}")
        return None

    def _scrub(self, exc: BaseException) -> str:
        """The first line of a driver message, without any password of the URL."""
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _probe(self) -> None:
        """Open one connection outside the pool, for the reason when it fails."""
        try:
            psycopg.connect(self._conninfo, autocommit=True).close()
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot connect to PostgreSQL at {self.description}: {self._scrub(exc)}") from None

    # ------------------------------------------------------------------ health and shutdown

    def check(self) -> None:
        try:
            with self._transaction(write=False, timeout_s=min(self._timeout, 2.0)) as db:
                in_recovery, read_only, store_id = db.execute(
                    "SELECT pg_is_in_recovery(), current_setting('transaction_read_only'), "
                    "(SELECT value FROM store_meta WHERE key = 'store_id')"
                ).fetchone()
        except StoreUnavailable:
            if self._lost is None:
                self._probe()  # the reason, when the server is down or refuses us
            raise
        if store_id != self.store_id:
            self._mark_lost()
            raise StoreUnavailable(self._lost or "")
        if in_recovery or read_only == "on":
            raise StoreUnavailable(
                f"PostgreSQL at {self.description} is read-only (a standby, or default_transaction_read_only is on)"
            )

    def close(self) -> None:
        self._pool.close()

    def scrub(self) -> None:
        """VACUUM the tenant tables after an erasure (outside a transaction, as VACUUM must be)."""
        with self._transaction(write=False) as db:
            db.execute(f"VACUUM FULL {', '.join(TENANT_TABLES)}")

    # ------------------------------------------------------------------ schema

    def _lock_migrations(self, db: Executor) -> None:
        db.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))

    def _after_migrations(self, db: Executor) -> None:
        """When the login role bypasses row-level security, make (once) and use a role that does not."""
        (bypasses,) = db.execute(
            "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        if not bypasses:
            return
        db.execute(  # roles are cluster-wide: another database's store may be creating it right now
            f"DO $$ BEGIN CREATE ROLE {TENANT_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS; "
            f"EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
        )
        db.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(TENANT_TABLES)} TO {TENANT_ROLE}")
        self._role = TENANT_ROLE


def _passwords(url: str) -> list[str]:
    """Every spelling of the URL's password (raw and decoded, in the authority or a parameter)."""
    parts = urlsplit(url)
    found = [parts.password or ""] + [v for k, v in parse_qsl(parts.query) if k.lower() == "password"]
    return sorted({s for p in found for s in (p, unquote(p)) if s}, key=len, reverse=True)
