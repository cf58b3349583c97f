"""The server's state: the store, the caches, the shared components, the loaded sessions, the metrics.

Model and store work runs off the event loop in a bounded pool (``AppState.run``).

The store is the truth, and a loaded session is a copy of a prefix of it. Several workers (processes,
hosts) may append to one session, so each use of a session first catches up: the rows from the
position the copy has reached on are read and added, their artifacts coming from the shared cache
(no model runs). An append computes and stores its artifacts first, then commits its row (the store
gives it the next position), then catches up, which brings in its own row and any other worker's rows
before it. A message appended through one worker is therefore in the next context any worker builds.
A session is evicted (least recently used) past ``max_sessions_in_memory``; the artifact caches are
keyed by content hash, so they stay correct whatever any worker does, and are bounded LRUs.

Tenants: a loaded session is found by (tenant, id), and reaches the store only through its tenant's
``TenantStore``. Each session has its own artifact cache over its own rows (``SessionArtifacts``), and
each tenant its own memory-only cache for the stateless routes: nothing derived from one tenant's text
is ever looked up for another (docs/server.md). Erasing a session or a tenant cancels its queued
background jobs, forgets what is loaded, and lets the store scrub the bytes.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import httpx
from prometheus_client import CollectorRegistry, Counter, Histogram

from ..core.accounting import verbatim_cost
from ..core.config import Packing, Render
from ..core.errors import InvalidInput, UnknownSession
from ..core.protocols import Components
from ..core.tags import parse_tag
from ..core.telemetry import Observer
from ..core.turns import Turn
from ..core.types import FIDELITIES, Context, Message
from ..engine import ArtifactCache, FocusManager
from ..engine.ingest import Ingestor, Row
from .answerer import BuiltinModel
from .auth import KeyRing, RateLimiter
from .middleware import CacheCollector
from .settings import ServerSettings
from .store import Store, TenantStore, open_store, valid_session_id

T = TypeVar("T")
log = logging.getLogger("afm_local.server")


SESSION_CACHE_ENTRIES = 512  # a loaded session's history holds its artifacts; the cache serves ingest
STATELESS_CACHE_ENTRIES = 50_000  # per tenant, memory only


class SessionArtifacts:
    """``engine.cache.CacheBackend`` over one session's artifact rows (``TenantStore``)."""

    def __init__(self, store: TenantStore, session_id: str) -> None:
        self.store, self.session_id = store, session_id

    def load_artifact(self, kind: str, key: str) -> bytes | None:
        return self.store.load_artifact(self.session_id, kind, key)

    def save_artifact(self, kind: str, key: str, data: bytes) -> None:
        self.store.save_artifact(self.session_id, kind, key, data)


@dataclass
class SessionState:
    cache: ArtifactCache
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    fm: FocusManager | None = None


class AppState:
    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.store: Store = open_store(
            settings.db,
            synchronous=settings.synchronous,
            pool_size=settings.concurrency + 2,  # + health check, background model
            encryption_key=settings.db_key,
        )
        self.keyring = KeyRing(self.store.keys, settings.api_key)
        self.rate_limiter = RateLimiter(settings.rate_limit, settings.rate_burst)
        self.stateless: OrderedDict[str, ArtifactCache] = OrderedDict()  # by tenant, memory only
        self._retired = {"session": [0, 0], "stateless": [0, 0]}  # hits and misses of caches let go
        self.components: Components | None = settings.components
        self.limiter = anyio.CapacityLimiter(settings.concurrency)
        self.sessions: OrderedDict[tuple[str, str], SessionState] = OrderedDict()
        self.builtin = (
            BuiltinModel(settings.model_path, settings.threads, settings.n_ctx) if not settings.upstream else None
        )
        self.http: httpx.AsyncClient | None = None
        self.observer = _otel_observer() if settings.otel else None
        self.health_problem: str | None = None
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "afm_http_requests",
            "HTTP requests by route and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "afm_http_request_duration_seconds",
            "Request latency by route.",
            ["route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
        )
        self.tokens_saved = Counter(
            "afm_tokens_saved", "History tokens AFM kept out of the prompt.", ["route"], registry=self.registry
        )
        self.tokens_used = Counter(
            "afm_tokens_used", "Tokens of the packed contexts.", ["route"], registry=self.registry
        )
        self.appended = Counter("afm_messages_appended", "Messages committed to the store.", registry=self.registry)
        self.registry.register(CacheCollector(self.cache_counts))

    def report_health(self, problem: str | None) -> None:
        """Log the store's health when it changes (a load balancer polls it every few seconds)."""
        if problem != self.health_problem:
            if problem:
                log.error("health check fails: %s", problem)
            else:
                log.info("health check passes again")
            self.health_problem = problem

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    def manager(self, cache: ArtifactCache, session_id: str | None = None) -> FocusManager:
        assert self.components is not None
        return FocusManager(
            self.settings.config, components=self.components, cache=cache, observer=self.observer, memory_id=session_id
        )

    def tenant(self, name: str) -> TenantStore:
        """The store as tenant ``name`` sees it, with the tenant quota of the settings."""
        return self.store.tenant(name, self.settings.quota)

    def stateless_cache(self, tenant: str) -> ArtifactCache:
        """The tenant's memory-only cache for the stateless routes (the most recent tenants' are kept)."""
        cache = self.stateless.get(tenant)
        if cache is None:
            cache = self.stateless[tenant] = ArtifactCache(max_entries=STATELESS_CACHE_ENTRIES)
            while len(self.stateless) > self.settings.max_tenant_caches:
                self._retire("stateless", self.stateless.popitem(last=False)[1])
        self.stateless.move_to_end(tenant)
        return cache

    def cache_counts(self) -> dict[str, tuple[int, int]]:
        """Hits and misses of every artifact cache this process had, by kind of cache (for /metrics)."""
        live = {
            "session": [s.cache for s in list(self.sessions.values())],
            "stateless": list(self.stateless.values()),
        }
        return {
            name: (retired[0] + sum(c.hits for c in live[name]), retired[1] + sum(c.misses for c in live[name]))
            for name, retired in self._retired.items()
        }

    def _retire(self, name: str, cache: ArtifactCache) -> None:
        self._retired[name][0] += cache.hits
        self._retired[name][1] += cache.misses

    def count_context(self, ctx: Context, original: int, route: str) -> dict[str, str]:
        """The ``X-AFM-*`` headers of a packed context, with the token metrics counted."""
        headers = afm_headers(ctx, original)
        self.tokens_saved.labels(route=route).inc(int(headers["X-AFM-Tokens-Saved"]))
        self.tokens_used.labels(route=route).inc(ctx.tokens_used)
        return headers

    # -------------------------------------------------------------- sessions

    async def session(self, store: TenantStore, session_id: str) -> SessionState:
        """The tenant's loaded session, caught up with the store (restored on first use: every artifact
        from its rows). ``UnknownSession`` when the tenant has no such session, whoever else may."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        key = (store.tenant, session_id)
        state = self.sessions.get(key)
        if state is None:
            cache = ArtifactCache(SessionArtifacts(store, session_id), max_entries=SESSION_CACHE_ENTRIES)
            state = self.sessions[key] = SessionState(cache)
        async with state.lock:
            await self.catch_up(store, session_id, state)
        if self.sessions.get(key) is state:
            self.sessions.move_to_end(key)
        self._evict()
        return state

    async def catch_up(self, store: TenantStore, session_id: str, state: SessionState) -> None:
        """Add the rows any worker committed since ``state`` last looked; the caller holds ``state.lock``."""
        try:
            await self.run(self._catch_up, store, session_id, state)
        except UnknownSession:
            self.forget(store.tenant, session_id, state)
            raise

    def _catch_up(self, store: TenantStore, session_id: str, state: SessionState) -> None:
        known = len(state.fm.messages) if state.fm is not None else 0
        found = store.messages_since(session_id, known)
        if found is None:
            raise UnknownSession(session_id)
        count, rows = found
        if state.fm is None or count < known or (rows and rows[0]["seq"] != known):
            # First use, or the store no longer holds what this copy has (restored from a backup): rebuild.
            state.fm = self.manager(state.cache, session_id)
            if known:
                found = store.messages_since(session_id, 0)
                rows = found[1] if found else []
        if rows:
            state.fm.add_messages(rows)  # store rows are turns (role, content, importance, id) with their seq

    def prepare_artifacts(self, state: SessionState, turn: Turn) -> None:
        """Compute and store every artifact of a message about to be appended, so that its row commits
        last and restoring it never runs a model; the session's manager then takes the message in from
        the cache (and schedules the background model's work on it, if any)."""
        assert self.components is not None
        Ingestor(self.components, self.settings.config, state.cache).artifacts([Row.of(turn)])

    async def append(self, store: TenantStore, session_id: str, turn: Turn) -> dict[str, Any]:
        """Artifacts first, then the row (the store gives it the session's next position), then the answer:
        what returns is committed. The session must be the tenant's (404 before any model work)."""
        session = await self.session(store, session_id)
        await self.run(self.prepare_artifacts, session, turn)
        importance = turn.importance.value if turn.importance is not None else None
        async with session.lock:
            row = await self.run(store.append_message, session_id, turn.id, turn.role, turn.content, importance)
            await self.catch_up(store, session_id, session)
        assert session.fm is not None
        self.appended.inc()
        return message_out(session.fm.messages[row["seq"]], row)

    def _evict(self) -> None:
        excess = len(self.sessions) - self.settings.max_sessions_in_memory
        for key in list(self.sessions)[: max(0, excess)]:
            if not self.sessions[key].lock.locked():
                self._retire("session", self.sessions.pop(key).cache)

    def forget(self, tenant: str, session_id: str, state: SessionState | None = None) -> None:
        """Let a loaded session go (only ``state``, when given); its queued background jobs are cancelled."""
        key = (tenant, session_id)
        if key in self.sessions and (state is None or self.sessions[key] is state):
            gone = self.sessions.pop(key)
            if gone.fm is not None:
                gone.fm.close()
            self._retire("session", gone.cache)

    # -------------------------------------------------------------- erasure

    async def erase_session(self, store: TenantStore, session_id: str) -> None:
        """Erase one session of the tenant everywhere: its queued jobs, its loaded copy, its rows and bytes;
        ``UnknownSession`` when the tenant has none by that id."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        state = self.sessions.get((store.tenant, session_id))
        if state is None:
            erased = await self.run(store.erase_session, session_id)
        else:
            async with state.lock:
                if state.fm is not None:
                    state.fm.close()
                erased = await self.run(store.erase_session, session_id)
                self.forget(store.tenant, session_id)
        if not erased:
            raise UnknownSession(session_id)

    async def erase_tenant(self, store: TenantStore) -> int:
        """Erase everything the tenant stored: sessions (loaded or not), its stateless cache, the bytes."""
        for tenant, session_id in [k for k in self.sessions if k[0] == store.tenant]:
            self.forget(tenant, session_id)
        cache = self.stateless.pop(store.tenant, None)
        if cache is not None:
            self._retire("stateless", cache)
        return await self.run(store.erase)


def _otel_observer() -> Observer:
    """``--otel``: spans through the configured tracer provider (the SDK's over OTLP when none is set)."""
    try:
        from ..integrations.otel import OtelObserver, configure
    except ImportError as exc:
        raise InvalidInput(
            f"--otel needs OpenTelemetry: pip install 'afm-local[otel]' ({exc.name} is missing)"
        ) from None
    configure()
    return OtelObserver()


def message_out(message: Message, row: dict[str, Any] | None) -> dict[str, Any]:
    tag = parse_tag(message.raw)[0]
    return {
        "id": message.id,
        "seq": message.index,
        "role": message.role,
        "content": message.raw,
        "importance": message.importance.value,
        "importance_source": message.importance_source,
        "importance_override": row.get("importance") if row else None,
        "tag": tag.value if tag is not None else None,
        "tokens_full": message.tokens_full,
        "tokens_compressed": message.tokens_compressed,
        "tokens_placeholder": message.tokens_placeholder,
        "compressed": message.compressed.text,
        "placeholder": message.placeholder,
        "created": row.get("created") if row else None,
    }


def afm_headers(ctx: Context, original_tokens: int) -> dict[str, str]:
    counts = ctx.fidelity_counts
    return {
        "X-AFM-Tokens-Used": str(ctx.tokens_used),
        "X-AFM-Tokens-Saved": str(max(0, original_tokens - ctx.tokens_used)),
        "X-AFM-Budget": str(ctx.budget_tokens),
        "X-AFM-Fidelity": ",".join(f"{f.value}={counts.get(f.value, 0)}" for f in FIDELITIES),
    }


def pack_with_baseline(
    fm: FocusManager, query: str, budget: int, preamble: str | None, render: Render | None, packing: Packing | None
) -> tuple[Context, int]:
    """Pack ``fm``'s history; returns the context and what the whole history verbatim would cost (the
    "tokens saved" baseline). Engine errors propagate: the app maps ``AFMError`` classes to HTTP statuses."""
    ctx = fm.build_context(query, budget, preamble, render=render, packing=packing)
    original = verbatim_cost((m.tokens_full for m in fm.messages), fm.components.counter, query, preamble, fm.config)
    return ctx, original
