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
from ..core.telemetry import Observer
from ..core.turns import Turn
from ..core.types import FIDELITIES, Context, Message
from ..engine import ArtifactCache, FocusManager
from ..engine.ingest import Ingestor
from .answerer import BuiltinModel
from .middleware import CacheCollector
from .settings import ServerSettings
from .store import Store, open_store, valid_session_id

T = TypeVar("T")
log = logging.getLogger("afm_local.server")


@dataclass
class SessionState:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    fm: FocusManager | None = None


class AppState:
    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.store: Store = open_store(
            settings.db, synchronous=settings.synchronous, pool_size=settings.concurrency + 2
        )  # + health check, background model
        self.session_cache = ArtifactCache(backend=self.store)
        self.stateless_cache = ArtifactCache(max_entries=100_000)  # memory only: see docs/server.md
        self.components: Components | None = settings.components
        self._ingestor: Ingestor | None = None
        self.limiter = anyio.CapacityLimiter(settings.concurrency)
        self.sessions: OrderedDict[str, SessionState] = OrderedDict()
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
        self.registry.register(CacheCollector({"session": self.session_cache, "stateless": self.stateless_cache}))

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

    def ingestor(self) -> Ingestor:
        """Ingest over the sessions' cache, for artifacts made before a row commits."""
        if self._ingestor is None:
            assert self.components is not None
            self._ingestor = Ingestor(self.components, self.settings.config, self.session_cache)
        return self._ingestor

    def count_context(self, ctx: Context, original: int, route: str) -> dict[str, str]:
        """The ``X-AFM-*`` headers of a packed context, with the token metrics counted."""
        headers = afm_headers(ctx, original)
        self.tokens_saved.labels(route=route).inc(int(headers["X-AFM-Tokens-Saved"]))
        self.tokens_used.labels(route=route).inc(ctx.tokens_used)
        return headers

    # -------------------------------------------------------------- sessions

    async def session(self, session_id: str) -> SessionState:
        """The loaded session, caught up with the store (restored on first use: every artifact from the cache)."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        state = self.sessions.get(session_id)
        if state is None:
            state = self.sessions[session_id] = SessionState()
        async with state.lock:
            await self.catch_up(session_id, state)
        if self.sessions.get(session_id) is state:
            self.sessions.move_to_end(session_id)
        self._evict()
        return state

    async def catch_up(self, session_id: str, state: SessionState) -> None:
        """Add the rows any worker committed since ``state`` last looked; the caller holds ``state.lock``."""
        try:
            await self.run(self._catch_up, session_id, state)
        except UnknownSession:
            if self.sessions.get(session_id) is state:
                del self.sessions[session_id]
            raise

    def _catch_up(self, session_id: str, state: SessionState) -> None:
        known = len(state.fm.messages) if state.fm is not None else 0
        found = self.store.messages_since(session_id, known)
        if found is None:
            raise UnknownSession(session_id)
        count, rows = found
        if state.fm is None or count < known or (rows and rows[0]["seq"] != known):
            # First use, or the store no longer holds what this copy has (restored from a backup): rebuild.
            state.fm = self.manager(self.session_cache, session_id)
            if known:
                found = self.store.messages_since(session_id, 0)
                rows = found[1] if found else []
        if rows:
            state.fm.add_messages(rows)  # store rows are turns (role, content, importance, id, attachments)

    def prepare_artifacts(self, turn: Turn) -> None:
        """Compute and store every artifact of a message about to be appended, so that its row commits
        last and restoring it never runs a model; the session's manager then takes the message in from
        the cache (and schedules the background model's work on it, if any)."""
        ingestor = self.ingestor()
        ingestor.artifacts(ingestor.rows([turn]))

    async def append(self, session_id: str, turn: Turn) -> dict[str, Any]:
        """Artifacts first, then the row (the store gives it the session's next position), then the answer:
        what returns is committed. The session must exist (404 before any model work); a bad image or file
        is refused while the artifacts are made, before anything is stored."""
        session = await self.session(session_id)
        await self.run(self.prepare_artifacts, turn)
        importance = turn.importance.value if turn.importance is not None else None
        async with session.lock:
            row = await self.run(
                self.store.append_message, session_id, turn.id, turn.role, turn.content, importance, turn.attachments
            )
            await self.catch_up(session_id, session)
        assert session.fm is not None
        self.appended.inc()
        return message_out(session.fm.messages[row["seq"]], row)

    async def delete(self, session_id: str) -> None:
        """Delete a session and everything it holds; ``UnknownSession`` when there is none."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        session = self.sessions.get(session_id)
        if session is not None:
            async with session.lock:
                deleted = await self.run(self.store.delete_session, session_id)
                self.forget(session_id)
        else:
            deleted = await self.run(self.store.delete_session, session_id)
        if not deleted:
            raise UnknownSession(session_id)

    def _evict(self) -> None:
        excess = len(self.sessions) - self.settings.max_sessions_in_memory
        for sid in list(self.sessions)[: max(0, excess)]:
            if not self.sessions[sid].lock.locked():
                del self.sessions[sid]

    def forget(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)


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
    return {
        "id": message.id,
        "seq": message.index,
        "role": message.role,
        "content": message.raw,
        "importance": message.importance.value,
        "importance_source": message.importance_source,
        "importance_override": row.get("importance") if row else None,
        "tokens_full": message.tokens_full,
        "tokens_compressed": message.tokens_compressed,
        "tokens_placeholder": message.tokens_placeholder,
        "compressed": message.compressed.text,
        "placeholder": message.placeholder,
        "attachments": [a.summary() for a in message.attachments],
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
