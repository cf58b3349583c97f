"""The API keys table: a public key id, the tenant, and the sha256 digest of the key; never the key.

The key itself is made and checked in ``server/auth.py``; this module only stores and finds digests.
The table has no tenant policy: a key is looked up before its tenant is known, and it holds nothing a
tenant wrote.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .base import Transactions


@dataclass(frozen=True, slots=True)
class StoredKey:
    key_id: str
    tenant: str
    digest: str
    created: float
    revoked: float | None


class KeyTable:
    """Add, find, list and revoke keys; every write is committed before it returns."""

    def __init__(self, store: Transactions) -> None:
        self._store = store

    def add(self, key_id: str, tenant: str, digest: str) -> StoredKey:
        created = time.time()
        with self._store._transaction(write=True) as db:
            db.execute(
                "INSERT INTO api_keys (key_id, tenant_id, digest, created) VALUES (?, ?, ?, ?)",
                (key_id, tenant, digest, created),
            )
        return StoredKey(key_id, tenant, digest, created, None)

    def find(self, key_id: str) -> StoredKey | None:
        """The key with this id, unless it was revoked."""
        with self._store._transaction(write=False) as db:
            row = db.execute(
                "SELECT key_id, tenant_id, digest, created, revoked FROM api_keys WHERE key_id = ? AND revoked IS NULL",
                (key_id,),
            ).fetchone()
        return _key(row) if row else None

    def list(self, tenant: str | None = None) -> list[StoredKey]:
        where, params = ("WHERE tenant_id = ? ", (tenant,)) if tenant is not None else ("", ())
        with self._store._transaction(write=False) as db:
            rows = db.execute(
                f"SELECT key_id, tenant_id, digest, created, revoked FROM api_keys {where}ORDER BY tenant_id, created",
                params,
            ).fetchall()
        return [_key(r) for r in rows]

    def revoke(self, tenant: str, key_id: str | None = None) -> int:
        """Revoke one key of ``tenant`` (or all of them); returns how many were active."""
        one, params = ("AND key_id = ? ", (key_id,)) if key_id is not None else ("", ())
        with self._store._transaction(write=True) as db:
            return int(
                db.execute(
                    f"UPDATE api_keys SET revoked = ? WHERE tenant_id = ? {one}AND revoked IS NULL",
                    (time.time(), tenant, *params),
                ).rowcount
            )

    def any(self) -> bool:
        """Whether any key was ever made (revoked ones count: revoking every key must not open a server)."""
        with self._store._transaction(write=False) as db:
            return db.execute("SELECT 1 FROM api_keys LIMIT 1").fetchone() is not None


def _key(row: Any) -> StoredKey:
    return StoredKey(str(row[0]), str(row[1]), str(row[2]), float(row[3]), None if row[4] is None else float(row[4]))
