"""What every store module shares: the connection protocol the SQL is written against, and the rules
for ids (session ids are random; tenant names are chosen by the operator)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
TENANT_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
DEFAULT_TENANT = "default"  # the tenant of --api-key-env, and of everything stored before tenants


def new_session_id() -> str:
    return secrets.token_urlsafe(18)  # 24 characters of [A-Za-z0-9_-]


def valid_session_id(session_id: object) -> bool:
    return isinstance(session_id, str) and SESSION_ID_RE.fullmatch(session_id) is not None


def valid_tenant(name: object) -> bool:
    return isinstance(name, str) and TENANT_RE.fullmatch(name) is not None


class Executor(Protocol):
    """What the shared SQL needs from a connection: ``execute`` with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...


class Transactions(Protocol):
    """What the tenant and key views need from a backend: its transactions and its scrubbing."""

    description: str

    def _transaction(
        self, *, write: bool, durable: bool = True, tenant: str | None = None
    ) -> AbstractContextManager[Executor]: ...

    def scrub(self) -> None: ...
