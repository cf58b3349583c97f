"""The server's state: the store, the shared components, the loaded sessions (``server.sessions``), the
stateless routes' caches, the metrics (``server.metrics``), the upstream client and the built-in model.

Model and store work runs off the event loop in a bounded pool (``AppState.run``). Tenants: each tenant
has its own memory-only cache for the stateless routes, and its sessions their own caches over their own
rows: nothing derived from one tenant's text is ever looked up for another (docs/server.md). Erasing a
tenant forgets what is loaded and lets the store scrub the bytes.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import httpx

from ..core.config import AFMConfig
from ..core.errors import InvalidInput
from ..core.protocols import Components
from ..core.telemetry import Observer
from ..engine import ArtifactCache, FocusManager
from .answerer import BuiltinModel
from .auth import KeyRing, RateLimiter
from .metrics import Metrics
from .sessions import Sessions
from .settings import ServerSettings
from .store import Store, TenantStore, open_store

T = TypeVar("T")
log = logging.getLogger("afm_local.server")

STATELESS_CACHE_ENTRIES = 50_000  # per tenant, memory only


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
        self._stateless_retired = [0, 0]  # hits and misses of stateless caches let go
        self.components: Components | None = settings.components
        self.limiter = anyio.CapacityLimiter(settings.concurrency)
        self.builtin = (
            BuiltinModel(settings.model_path, settings.threads, settings.n_ctx) if not settings.upstream else None
        )
        self.http: httpx.AsyncClient | None = None
        self.observer = _otel_observer() if settings.otel else None
        self.health_problem: str | None = None
        self.metrics = Metrics(self.cache_counts)
        self.sessions = Sessions(
            self.run, self.manager, settings.max_sessions_in_memory, lambda: self.metrics.appended.inc()
        )

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

    def manager(
        self, cache: ArtifactCache, session_id: str | None = None, config: AFMConfig | None = None
    ) -> FocusManager:
        assert self.components is not None
        return FocusManager(
            config or self.settings.config,
            components=self.components,
            cache=cache,
            observer=self.observer,
            memory_id=session_id,
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
                self._retire_stateless(self.stateless.popitem(last=False)[1])
        self.stateless.move_to_end(tenant)
        return cache

    def _retire_stateless(self, cache: ArtifactCache) -> None:
        self._stateless_retired[0] += cache.hits
        self._stateless_retired[1] += cache.misses

    def cache_counts(self) -> dict[str, tuple[int, int]]:
        """Hits and misses of every artifact cache this process had, by kind of cache (for /metrics)."""
        live = list(self.stateless.values())
        hits, misses = self._stateless_retired
        stateless = (hits + sum(c.hits for c in live), misses + sum(c.misses for c in live))
        return {"session": self.sessions.cache_counts(), "stateless": stateless}

    async def erase_tenant(self, store: TenantStore) -> int:
        """Erase everything the tenant stored: sessions (loaded or not), its stateless cache, the bytes."""
        self.sessions.forget_tenant(store.tenant)
        cache = self.stateless.pop(store.tenant, None)
        if cache is not None:
            self._retire_stateless(cache)
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
