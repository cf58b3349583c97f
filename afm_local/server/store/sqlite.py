"""The embedded store: one SQLite file in WAL mode, the default of ``afm-local serve``.

Durability
    ``synchronous=NORMAL`` (the default) makes every committed transaction survive a crash of the
    *process* (SIGKILL, OOM kill, a segfault): the commit is in the WAL file in the OS page cache before
    ``COMMIT`` returns, and SQLite replays it on the next open. It does not survive a power loss or a
    kernel crash before the next checkpoint; ``synchronous="FULL"`` does, at one fsync per commit.

The file under the path
    An open connection keeps writing to the file it opened even after that file was deleted or
    replaced, and everything written there vanishes with the process. So the identity (device and
    inode) of the database, ``-wal`` and ``-shm`` files is recorded when the store opens and checked
    before every transaction and again after every commit, before the caller may acknowledge it. Once
    it differs the store refuses every read and write for good (the health check fails too), and it
    saves what this process can still read to ``<file>.recovered-<unix time>`` with ``VACUUM INTO``:
    the messages acknowledged before the file was deleted are not lost with it.

Errors
    SQLite's result codes (not its messages) decide the class: ``SQLITE_FULL``, or an I/O error while
    the file system or the process's file-size limit leaves no room, is ``StoreFull``; read-only,
    locked, busy, I/O and cannot-open errors are ``StoreUnavailable``; a file that is not a database or
    is corrupt is a ``StoreError``. Whatever failed was rolled back and not acknowledged.

Connections
    A fixed pool of ``pool_size`` connections, opened when the store opens and reused by whichever
    thread runs a transaction (a thread waits at most ``POOL_WAIT_S`` for a free one, then gets a
    ``StoreUnavailable``), and one process-wide write lock, so writers in one process never see
    ``SQLITE_BUSY``; several processes on one host share the file through SQLite's own locking (a 30 s
    busy timeout). Not one connection per thread: the server's worker threads come and go (anyio retires
    one idle for 10 s), so per-thread connections were opened over and over in the middle of requests
    and never closed; with SQLCipher every opening derives the key anew (256,000 PBKDF2 rounds, about
    0.2 s of CPU, seconds on a busy machine).

Files
    The database file is created 0600 (only its owner reads or writes it), SQLite gives its ``-wal`` and
    ``-shm`` the same mode, a recovered copy is made 0600 too, and an existing file that other users
    could read is narrowed to its owner when the store opens.

Erasure
    ``secure_delete`` is on: SQLite overwrites deleted cells and freed pages with zeros. A deleted row
    still has its old pages in the WAL until a checkpoint copies the zeroed pages back and truncates
    the WAL, which ``scrub`` does after every erasure (retried while another connection reads).

Encryption (opt-in)
    With ``encryption_key`` the file is opened through SQLCipher (the ``sqlcipher3`` package, the
    ``encryption`` extra): every page of the database and of its WAL is encrypted (AES-256, HMAC per
    page), and the key is set on each connection before anything is read. A wrong key, or an
    encrypted file opened without one, is a one-line ``StoreError`` at startup. The key is derived once
    per pooled connection, all of them at startup (docs/server.md, Encryption at rest).
"""

from __future__ import annotations

import logging
import os
import queue
import resource
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import ModuleType
from typing import Any

from ...core.errors import AFMError, StoreError, StoreFull, StoreUnavailable, UnknownSession
from .base import Executor
from .sql import SQLStore

log = logging.getLogger("afm_local.server")

FILES = ("", "-wal", "-shm")
ROOM_MARGIN = 1 << 20  # an I/O error with less room than this (disk or file-size limit) is a full disk
# SQLite primary result codes (https://sqlite.org/rescode.html)
SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_NOMEM, SQLITE_READONLY = 3, 5, 6, 7, 8
SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = 10, 11, 13, 14, 26
SQLITE_CONSTRAINT_FOREIGNKEY = 787
CHECKPOINT_TRIES = 50  # scrub: a checkpoint that a reader holds up is retried, 20 ms apart
POOL_WAIT_S = 30.0  # how long a transaction waits for a free connection (as long as SQLite's busy timeout)
UNAVAILABLE = {SQLITE_PERM, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_NOMEM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN}


def _create_private(path: Path) -> None:
    """An empty file at ``path`` that only its owner may read and write (0600), unless one is there."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreUnavailable(f"cannot create {path}: {exc.strerror}") from None


def _private_files(path: Path) -> None:
    """The database file created 0600 (SQLite gives its ``-wal`` and ``-shm`` the database file's mode), and
    the group and other bits taken off the three files where they exist already."""
    _create_private(path)
    for suffix in FILES:
        file = path.with_name(path.name + suffix)
        try:
            mode = file.stat().st_mode & 0o777
            if mode & 0o077:
                os.chmod(file, mode & 0o700)
                log.info("%s was readable by other users (mode %o); it is now %o", file, mode, mode & 0o700)
        except FileNotFoundError:
            continue
        except OSError as exc:  # not its owner: the operator's arrangement, said once
            log.warning("%s is readable by other users and could not be made private: %s", file, exc.strerror)


class SQLiteStore(SQLStore):
    """Sessions, messages and artifacts in one SQLite file; safe to share between threads."""

    dialect = "sqlite"

    def __init__(
        self,
        path: Path | str,
        *,
        synchronous: str = "NORMAL",
        encryption_key: str | None = None,
        pool_size: int = 4,
    ) -> None:
        if synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError("synchronous must be NORMAL, FULL or EXTRA")
        self._key = encryption_key
        self._driver = _driver(encryption_key is not None)
        self.path = Path(path)
        self.description = str(self.path)
        self.synchronous = synchronous.upper()
        self._write_lock = threading.Lock()
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._connections: list[sqlite3.Connection] = []  # every one the pool holds, in use or not
        self._closed = False
        self._identity: dict[str, tuple[int, int]] = {}
        self._lost: str | None = None
        self._lost_lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"cannot create the folder of {self.path}: {exc.strerror}") from None
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder, not a database file")
        _private_files(self.path)
        self._fill_pool(max(1, pool_size))
        try:
            self.store_id = self._migrate()
        except BaseException:
            self.close()
            raise
        self._identity = self._file_identity()

    # ------------------------------------------------------------------ connections and transactions

    def _fill_pool(self, size: int) -> None:
        try:
            for _ in range(size):
                conn = self._open()
                self._connections.append(conn)
                self._pool.put(conn)
        except self._driver.Error as exc:
            self.close()
            self._raise_translated(exc)
        except BaseException:
            self.close()
            raise

    def _open(self) -> sqlite3.Connection:
        conn = self._driver.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            if self._key is not None:  # before anything reads the file; SQLCipher's own log stays quiet
                conn.execute("PRAGMA cipher_log_level = NONE")
                conn.execute("PRAGMA key = '{}'".format(self._key.replace("'", "''")))
            for pragma in (
                "journal_mode=WAL",
                f"synchronous={self.synchronous}",
                "foreign_keys=ON",
                "secure_delete=ON",
                "busy_timeout=30000",
            ):
                conn.execute(f"PRAGMA {pragma}")
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A pooled connection for this thread's use until the block ends, then back to the pool."""
        if self._closed:
            raise StoreUnavailable(f"{self.path}: the store is closed (the server is shutting down)")
        try:
            conn = self._pool.get(timeout=POOL_WAIT_S)
        except queue.Empty:
            raise StoreUnavailable(
                f"{self.path}: no database connection came free in {POOL_WAIT_S:.0f} s, all {len(self._connections)} "
                f"in use (the server is overloaded; retry later)"
            ) from None
        try:
            yield conn
        finally:
            if conn.in_transaction:  # a failed ROLLBACK: the next user must start clean
                try:
                    conn.execute("ROLLBACK")
                except self._driver.Error:
                    pass
            self._pool.put(conn)

    @contextmanager
    def _transaction(self, *, write: bool, durable: bool = True, tenant: str | None = None) -> Iterator[Executor]:
        # ``durable`` is moot here: the synchronous setting applies to every commit. ``tenant`` too: every
        # tenant statement names its tenant (tenant.py), and SQLite has no row-level security.
        self._verify_file()
        try:
            with self._connection() as conn, self._write_lock if write else nullcontext():
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:  # SQLite may have rolled back already (disk full, I/O error)
                        try:
                            conn.execute("ROLLBACK")
                        except self._driver.Error:
                            pass
                    raise
        except self._driver.Error as exc:
            self._raise_translated(exc)
        if write:
            self._verify_file()  # committed to the file at self.path, or not acknowledged

    def _translate(self, exc: Exception) -> AFMError | None:
        code = getattr(exc, "sqlite_errorcode", None)
        if code is None:
            return None
        primary, name = code & 0xFF, getattr(exc, "sqlite_errorname", str(code))
        if code == SQLITE_CONSTRAINT_FOREIGNKEY:
            return UnknownSession("the session is gone")
        if primary == SQLITE_NOTADB and self._key is not None:
            return StoreError(f"cannot open {self.path}: the encryption key does not open it (wrong key?)")
        if primary == SQLITE_FULL or (primary == SQLITE_IOERR and self._no_room()):
            return StoreFull(
                f"{self.path}: no room left on the disk (or under the file-size limit); nothing was written ({name})"
            )
        if primary == SQLITE_READONLY or (primary == SQLITE_CANTOPEN and self._read_only()):
            return StoreUnavailable(f"cannot write {self.path}: the file or its folder is read-only ({name})")
        if primary in UNAVAILABLE:
            return StoreUnavailable(f"cannot use {self.path}: {exc} ({name})")
        if primary in (SQLITE_CORRUPT, SQLITE_NOTADB):
            hint = "; if it is encrypted, give its key with --db-key-env" if primary == SQLITE_NOTADB else ""
            return StoreError(f"{self.path} is not a usable SQLite database: {exc} ({name}){hint}")
        return None

    def _read_only(self) -> bool:
        """Whether this process may not write the database file or create its -wal and -shm next to it."""
        return not os.access(self.path.parent, os.W_OK) or (self.path.exists() and not os.access(self.path, os.W_OK))

    def _no_room(self) -> bool:
        """Whether the file system, or this process's file-size limit, leaves no room for the database."""
        try:
            fs = os.statvfs(self.path.parent)
            if fs.f_bavail * fs.f_frsize < ROOM_MARGIN:
                return True
            limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
            if limit == resource.RLIM_INFINITY:
                return False
            sizes = [
                os.stat(f"{self.path}{suffix}").st_size
                for suffix in FILES[:2]
                if os.path.exists(f"{self.path}{suffix}")
            ]
            return any(size + ROOM_MARGIN > limit for size in sizes)
        except OSError:
            return False

    # ------------------------------------------------------------------ the file under the path

    def _file_identity(self) -> dict[str, tuple[int, int]]:
        identity = {}
        for suffix in FILES:
            try:
                st = os.stat(f"{self.path}{suffix}")
            except OSError:
                continue
            identity[suffix] = (st.st_dev, st.st_ino)
        return identity

    def _verify_file(self) -> None:
        """Refuse, for good, a database whose files were deleted or replaced since the store opened."""
        if self._lost is None:
            current = self._file_identity()
            changed = [f"{self.path.name}{s}" for s, ident in self._identity.items() if current.get(s) != ident]
            if changed:
                with self._lost_lock:
                    if self._lost is None:
                        self._lost = self._rescue(changed)
                        log.error("%s", self._lost)
        if self._lost is not None:
            raise StoreUnavailable(self._lost)

    def _rescue(self, changed: list[str]) -> str:
        """Copy what this process can still read of the lost file next to it; returns the error to report."""
        what = (
            f"the database file {self.path} ({', '.join(changed)}) was deleted or replaced while the server "
            f"ran; writes are refused until a restart opens the file now at that path"
        )
        target = self.path.with_name(f"{self.path.name}.recovered-{int(time.time())}")
        try:
            _create_private(target)  # VACUUM INTO writes into an empty file, keeping its mode
            with self._connection() as conn, self._write_lock:
                conn.execute("VACUUM INTO ?", (str(target),))
        except self._driver.Error as exc:
            return f"{what}; its data could not be saved ({exc})"
        return f"{what}; this process saved its data to {target}"

    # ------------------------------------------------------------------ health and shutdown

    def check(self) -> None:
        with self._transaction(write=False) as db:
            db.execute("SELECT value FROM store_meta WHERE key = 'store_id'").fetchone()

    def scrub(self) -> None:
        """Copy the zeroed pages of an erasure into the file and truncate the WAL (see Erasure)."""
        self._verify_file()
        for _ in range(CHECKPOINT_TRIES):
            with self._connection() as conn, self._write_lock:
                busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if not busy:
                return
            time.sleep(0.02)
        log.warning("%s: the WAL could not be truncated after an erasure (a reader held it)", self.path)

    def close(self) -> None:
        """Close every pooled connection, in use or not; the store refuses transactions afterwards."""
        self._closed = True
        for conn in self._connections:
            try:
                conn.close()
            except self._driver.Error:
                pass
        self._connections.clear()

    # ------------------------------------------------------------------ schema

    def _adopt_legacy(self, db: Executor, applied: set[str]) -> set[str]:
        """A file from before named migrations has ``schema_version`` = 1: the initial migration. The
        version is raised past 1 so that those older releases refuse the file instead of misreading it."""
        if applied or db.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_version'").fetchone() is None:
            return applied
        row = db.execute("SELECT version FROM schema_version").fetchone()
        if row is None or row[0] != 1:
            raise StoreError(
                f"{self.path} has schema version {row[0] if row else 'none'}, which this afm-local cannot read"
            )
        db.execute("INSERT INTO _migrations (name, applied) VALUES ('m001_initial', ?)", (time.time(),))
        db.execute("UPDATE schema_version SET version = 2")
        return {"m001_initial"}


def _driver(encrypted: bool) -> Any:
    """``sqlite3``, or SQLCipher's drop-in ``sqlcipher3.dbapi2`` for an encrypted file."""
    if not encrypted:
        return sqlite3
    try:
        from sqlcipher3 import dbapi2
    except ImportError:
        raise StoreError(
            "an encrypted store needs SQLCipher, which is not installed: pip install 'afm-local[encryption]'"
        ) from None
    module: ModuleType = dbapi2
    return module
