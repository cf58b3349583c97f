"""The server's state: the store, the caches, the shared components, the loaded sessions, the metrics.

Model work runs off the event loop in a bounded pool (``AppState.run``); writes to one session are
ordered by a per-session lock; a session is restored from the store on first use, every artifact from
the persistent cache, and evicted (least recently used) past ``max_sessions_in_memory``.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

import anyio
import httpx
from prometheus_client import CollectorRegistry, Counter, Histogram

from ..core.accounting import verbatim_cost
from ..core.types import Context, Message
from ..engine import ArtifactCache, FocusManager
from ..core.protocols import Components
from .answerer import BuiltinModel
from .errors import APIError
from .middleware import CacheCollector
from .settings import ServerSettings
from .store import Store, valid_session_id

T = TypeVar("T")


@dataclass
class SessionState:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    fm: FocusManager | None = None


class AppState:
    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.store = Store(settings.db, synchronous=settings.synchronous)
        self.session_cache = ArtifactCache(backend=self.store)
        self.stateless_cache = ArtifactCache(max_entries=100_000)  # memory only: see docs/server.md
        self.components: Components | None = settings.components
        self.limiter = anyio.CapacityLimiter(max(1, settings.workers))
        self.sessions: OrderedDict[str, SessionState] = OrderedDict()
        self.builtin = BuiltinModel(settings.model_path, settings.threads, settings.n_ctx) if not settings.upstream else None
        self.http: httpx.AsyncClient | None = None
        self.registry = CollectorRegistry()
        self.requests = Counter("afm_http_requests", "HTTP requests by route and status.",
                                ["route", "method", "status"], registry=self.registry)
        self.latency = Histogram("afm_http_request_duration_seconds", "Request latency by route.", ["route"],
                                 registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
        self.tokens_saved = Counter("afm_tokens_saved", "History tokens AFM kept out of the prompt.", ["route"],
                                    registry=self.registry)
        self.tokens_used = Counter("afm_tokens_used", "Tokens of the packed contexts.", ["route"], registry=self.registry)
        self.appended = Counter("afm_messages_appended", "Messages committed to the store.", registry=self.registry)
        self.registry.register(CacheCollector({"session": self.session_cache, "stateless": self.stateless_cache}))

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    def manager(self, cache: ArtifactCache) -> FocusManager:
        assert self.components is not None
        return FocusManager(self.settings.config, components=self.components, cache=cache)

    def count_context(self, ctx: Context, original: int, route: str) -> dict[str, str]:
        """The ``X-AFM-*`` headers of a packed context, with the token metrics counted."""
        headers = afm_headers(ctx, original)
        self.tokens_saved.labels(route=route).inc(int(headers["X-AFM-Tokens-Saved"]))
        self.tokens_used.labels(route=route).inc(ctx.tokens_used)
        return headers

    # -------------------------------------------------------------- sessions

    async def session(self, session_id: str) -> SessionState:
        """The loaded session (restored from the store on first use: every artifact from the cache)."""
        if not valid_session_id(session_id):
            raise APIError(404, "not_found", "unknown session")
        state = self.sessions.get(session_id)
        if state is None:
            state = self.sessions[session_id] = SessionState()
        async with state.lock:
            if state.fm is None:
                exists = await self.run(self.store.get_session, session_id)
                if exists is None:
                    if self.sessions.get(session_id) is state:
                        del self.sessions[session_id]
                    raise APIError(404, "not_found", "unknown session")
                rows = await self.run(self.store.messages, session_id)
                fm = self.manager(self.session_cache)
                if rows:
                    await self.run(fm.add_messages, [
                        {"role": r["role"], "content": r["content"], "importance": r["importance_override"], "id": r["id"]}
                        for r in rows
                    ])
                state.fm = fm
        if session_id in self.sessions:
            self.sessions.move_to_end(session_id)
        self._evict()
        return state

    def _evict(self) -> None:
        excess = len(self.sessions) - self.settings.max_sessions_in_memory
        for sid in list(self.sessions)[: max(0, excess)]:
            if not self.sessions[sid].lock.locked():
                del self.sessions[sid]

    def forget(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)


def message_out(message: Message, row: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": message.id,
        "seq": message.index,
        "role": message.role,
        "content": message.raw,
        "importance": message.importance.value,
        "importance_source": message.importance_source,
        "importance_override": row.get("importance_override") if row else None,
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
        "X-AFM-Fidelity": ",".join(f"{k}={counts.get(k, 0)}" for k in ("full", "compressed", "placeholder", "dropped")),
    }


def build(fm: FocusManager, query: str, budget: int, preamble: str | None, render: str | None,
          packing: str | None) -> tuple[Context, int]:
    """Pack ``fm``'s history; returns the context and what the whole history verbatim would cost.
    Engine errors propagate: the app maps ``AFMError`` classes to HTTP statuses."""
    ctx = fm.build_context(query, budget, preamble, render=render, packing=packing)
    original = verbatim_cost((m.tokens_full for m in fm.messages), fm.components.counter, query, preamble, fm.config)
    return ctx, original
