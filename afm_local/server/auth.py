"""API keys and tenants: who is calling, and how often they may.

A key is ``afm_<key id>_<secret>``: the key id (12 hex characters) is public and finds the stored
record; the store keeps only the sha256 digest of the whole key, so a copy of the database gives no
usable key. A presented key is hashed and compared with the digest in constant time
(``hmac.compare_digest``), as the one-tenant key of ``--api-key-env`` is compared with the key given;
that key belongs to the tenant ``default``. Keys are shown once, at creation, and never logged: the
access log names the key id.

When the server has no ``--api-key-env`` and no key was ever created in its store, it is open: every
request is the ``default`` tenant (the loopback default of a single user). Creating the first key
closes it within ``OPEN_CHECK_S``, for good: revoking every key leaves a server nobody can use, not an
open one.

A verified key is remembered for ``KEY_TTL_S`` (by the digest of the presented key), so a revoked key
stops working within that time in every worker.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass

from ..core.errors import InvalidInput
from .store import DEFAULT_TENANT, KeyTable, StoredKey, valid_tenant

KEY_RE = re.compile(r"^afm_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$")
KEY_TTL_S = 5.0
OPEN_CHECK_S = 1.0
MAX_REMEMBERED = 10_000


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request is: its tenant, and the id of the key it used (``env`` for --api-key-env's, ``open``
    when the server needs none)."""

    tenant: str
    key_id: str


OPEN = Principal(DEFAULT_TENANT, "open")


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def create_key(keys: KeyTable, tenant: str) -> tuple[StoredKey, str]:
    """A new key for ``tenant``: its stored record and the key itself, which nothing keeps."""
    if not valid_tenant(tenant):
        raise InvalidInput(f"tenant names are 1 to 64 of a-z 0-9 _ . - starting with a letter or digit, not {tenant!r}")
    key_id = secrets.token_hex(6)
    key = f"afm_{key_id}_{secrets.token_urlsafe(32)}"
    return keys.add(key_id, tenant, digest(key)), key


class KeyRing:
    """Resolves a bearer token to a ``Principal``: the --api-key-env key, or a key in the store."""

    def __init__(self, keys: KeyTable, env_key: str | None) -> None:
        self._keys = keys
        self._env = env_key.encode() if env_key else None
        self._known: dict[str, tuple[Principal, float]] = {}
        self._open: tuple[bool, float] = (False, 0.0)
        self._lock = threading.Lock()

    def is_open(self) -> bool:
        """No key was ever made: every request is the default tenant (checked at most once a second)."""
        return self._env is None and self.one_tenant()

    def one_tenant(self) -> bool:
        """No key was ever stored, so only the default tenant can call (an open server, or one with
        ``--api-key-env``'s key alone); blocking, a store read at most once a second."""
        now = time.monotonic()
        none_stored, checked = self._open
        if now - checked > OPEN_CHECK_S:
            none_stored = not self._keys.any()
            self._open = (none_stored, now)
        return none_stored

    def resolve_known(self, token: bytes | None) -> Principal | None:
        """The principal of the ``--api-key-env`` key or of a key verified in the last ``KEY_TTL_S``, without
        reading the store (for an address that failed too often: its valid keys still work)."""
        if not token:
            return None
        if self._env is not None and hmac.compare_digest(token, self._env):
            return Principal(DEFAULT_TENANT, "env")
        try:
            presented = digest(token.decode("ascii"))
        except UnicodeDecodeError:
            return None
        with self._lock:
            known = self._known.get(presented)
        return known[0] if known is not None and known[1] > time.monotonic() else None

    def resolve(self, token: bytes) -> Principal | None:
        """The principal of a presented key, or ``None``; blocking (a store read on a cache miss)."""
        if self._env is not None and hmac.compare_digest(token, self._env):
            return Principal(DEFAULT_TENANT, "env")
        try:
            key = token.decode("ascii")
        except UnicodeDecodeError:
            return None
        match = KEY_RE.fullmatch(key)
        if match is None:
            return None
        presented, now = digest(key), time.monotonic()
        with self._lock:
            known = self._known.get(presented)
        if known is not None and known[1] > now:
            return known[0]
        stored = self._keys.find(match.group(1))
        if stored is None or not hmac.compare_digest(presented.encode(), stored.digest.encode()):
            return None
        principal = Principal(stored.tenant, stored.key_id)
        with self._lock:
            if len(self._known) >= MAX_REMEMBERED:
                self._known.clear()
            self._known[presented] = (principal, now + KEY_TTL_S)
        return principal


class RateLimiter:
    """A token bucket per key id: ``rate`` requests a second on average, bursts up to ``burst``. Per
    process: with ``--workers N`` a key may make N times as many."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}

    def wait_needed(self, key_id: str) -> float:
        """0 when the request may go now (and it is counted), else the seconds until one may."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        tokens, last = self._buckets.get(key_id, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens < 1.0:
            self._buckets[key_id] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self._buckets[key_id] = (tokens - 1.0, now)
        if len(self._buckets) > MAX_REMEMBERED:
            self._buckets.clear()
        return 0.0


class FailureLimiter:
    """Failed authentications per source address: after ``per_minute`` failures within a minute the address
    gets 429s, before its key is even looked up, until the oldest failure is a minute old. Per process."""

    WINDOW_S = 60.0

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, source: str) -> float:
        """0 when ``source`` may try a key now, else the seconds until it may."""
        now = time.monotonic()
        with self._lock:
            times = self._failures.get(source)
            if times is None:
                return 0.0
            while times and times[0] <= now - self.WINDOW_S:
                times.popleft()
            if not times:
                del self._failures[source]
                return 0.0
            return times[0] + self.WINDOW_S - now if len(times) >= self.per_minute else 0.0

    def failed(self, source: str) -> None:
        with self._lock:
            if len(self._failures) >= MAX_REMEMBERED and source not in self._failures:
                self._failures.clear()
            times = self._failures.setdefault(source, deque(maxlen=self.per_minute))
            times.append(time.monotonic())
