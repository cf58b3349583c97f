"""``afm-local serve``: AFM over HTTP, fully local.

``create_app(settings)`` builds the FastAPI app; ``run_server(...)`` serves it with uvicorn on
127.0.0.1 by default. See docs/server.md for the API, the security model and the limits.

* Sessions and their messages live in SQLite (``afm_local.store``); every derived artifact
  (embedding, importance, compressed form, topic, token counts) is persisted there too, so a restart
  recomputes nothing. A message is acknowledged only after its row is committed.
* ``POST /v1/chat/completions`` is OpenAI-compatible: it packs the client's history with AFM and
  forwards it to ``--upstream`` (streaming passed through), or answers with the built-in llama.cpp
  model when there is no upstream. The only outbound connection the server ever opens is to
  ``--upstream``.
* Model work runs off the event loop in a bounded pool; writes to one session are ordered by a
  per-session lock; the llama.cpp model (not thread-safe) runs on one dedicated thread.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import threading
import uuid
from collections import OrderedDict
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, TypeVar
from urllib.parse import urlsplit

import anyio
import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import __version__
from .cache import ArtifactCache
from .components import Components, local_components
from .config import AFMConfig
from .manager import FocusManager
from .packing import BudgetTooSmall
from .answerer import BUILTIN_N_CTX, BuiltinModel
from .errors import STATUS_KIND, APIError, error_response
from .middleware import MAX_BODY_BYTES, AuthMiddleware, BodyLimitMiddleware, CacheCollector, MetricsMiddleware
from .schemas import (
    MAX_BUDGET,
    MAX_CONTENT_BYTES,
    AFMOptions,
    ChatCompletionRequest,
    ContextOptions,
    MessageIn,
    SessionCreated,
    StatelessContextRequest,
)
from .store import Store, UnknownSession, valid_session_id
from .types import ROLES, Context

log = logging.getLogger("afm_local.server")
T = TypeVar("T")

STATIC_DIR = Path(__file__).with_name("static")
INSPECTOR_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


# ---------------------------------------------------------------------------------------- settings


@dataclass
class ServerSettings:
    """Everything ``create_app`` needs. ``components`` may be injected (shared, already loaded)."""

    db: Path = Path("afm-local.db")
    upstream: str | None = None
    api_key: str | None = None
    upstream_api_key: str | None = None
    budget: int = 2000
    threads: int = 1
    workers: int = 2  # bounded pool for embedding / classification / packing
    synchronous: str = "NORMAL"  # WAL + NORMAL survives a process kill; FULL also a power loss
    abstractive: bool = True  # refine compressed forms with the GGUF model in the background
    max_body_bytes: int = MAX_BODY_BYTES
    max_sessions_in_memory: int = 1000
    model_path: Path | None = None  # built-in answerer; default: the manifest's qwen2.5-coder GGUF
    n_ctx: int = BUILTIN_N_CTX
    upstream_timeout_s: float = 600.0
    config: AFMConfig = field(default_factory=AFMConfig)
    components: Components | None = None

    def __post_init__(self) -> None:
        self.db = Path(self.db)
        if not isinstance(self.budget, int) or not 1 <= self.budget <= MAX_BUDGET:
            raise ValueError(f"budget must be between 1 and {MAX_BUDGET}")
        if self.upstream is not None:
            parts = urlsplit(self.upstream)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"upstream must be an http(s) URL, got {self.upstream!r}")
            self.upstream = self.upstream.rstrip("/")
            if self.upstream.endswith("/v1"):
                self.upstream = self.upstream[: -len("/v1")]
        if self.api_key is not None and not self.api_key:
            raise ValueError("the API key is empty")


# ---------------------------------------------------------------------------------------- state


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

    # -------------------------------------------------------------- sessions

    async def session(self, session_id: str) -> SessionState:
        """The loaded session (restored from SQLite on first use: every artifact from the cache)."""
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


def message_out(message: Any, row: dict[str, Any] | None) -> dict[str, Any]:
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


def original_cost(fm: FocusManager, query: str, preamble: str | None) -> int:
    """What sending the whole history verbatim would cost, counted as ``build_context`` counts."""
    cfg, count = fm.config, fm.components.counter.count
    total = sum(m.tokens_full + cfg.per_message_overhead for m in fm.messages)
    total += count(query) + cfg.per_message_overhead + cfg.reply_overhead
    if preamble:
        total += count(preamble) + cfg.per_message_overhead
    return total


def build(fm: FocusManager, query: str, budget: int, preamble: str | None, render: str | None, packing: str | None) -> tuple[Context, int]:
    try:
        ctx = fm.build_context(query, budget, preamble, render=render, packing=packing)
    except BudgetTooSmall as exc:
        raise APIError(422, "budget_too_small", str(exc), minimum_budget=exc.minimum) from None
    except ValueError as exc:
        raise APIError(422, "invalid_request", str(exc)) from None
    return ctx, original_cost(fm, query, preamble)


def _text_content(content: str | list[dict[str, Any]] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise APIError(422, "invalid_request", "only text content parts are supported")
        parts.append(part["text"])
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------- app


def create_app(settings: ServerSettings) -> FastAPI:
    state = AppState(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if state.components is None:
            state.components = await anyio.to_thread.run_sync(
                lambda: local_components(settings.config, threads=settings.threads, abstractive=settings.abstractive)
            )
        if settings.upstream:
            # trust_env=False: no proxy or netrc from the environment; the upstream is the only peer.
            state.http = httpx.AsyncClient(trust_env=False, follow_redirects=False,
                                           timeout=httpx.Timeout(settings.upstream_timeout_s, connect=10.0))
        log.info("afm-local server ready (db=%s, upstream=%s, auth=%s)", settings.db,
                 settings.upstream or "built-in", "on" if settings.api_key else "off")
        try:
            yield
        finally:
            if state.http is not None:
                await state.http.aclose()
            if state.builtin is not None:
                state.builtin.close()
            state.store.close()

    app = FastAPI(title="afm-local", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json",
                  description="Adaptive Focus Memory over HTTP, fully local. Every route but /healthz and the "
                              "static inspector page requires `Authorization: Bearer <key>` when a key is set.")
    app.state.afm = state

    # ------------------------------------------------------------------ error handlers

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> JSONResponse:
        return error_response(exc.status, exc.kind, exc.message, **exc.extra)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            ctx = next((e.get("ctx") or {} for e in errors if e.get("type") == "json_invalid"), {})
            return error_response(400, "invalid_json", f"request body is not valid JSON: {ctx.get('error', 'parse error')}")
        details = [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))[:300], "type": e.get("type")}
                   for e in errors[:20]]
        summary = "; ".join(f"{'.'.join(d['loc'][1:]) or 'body'}: {d['msg']}" for d in details[:5])
        return error_response(422, "invalid_request", summary, details=details)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else "error"
        if message == "There was an error parsing the body":
            return error_response(400, "invalid_json", "request body could not be parsed as JSON")
        return error_response(exc.status_code, STATUS_KIND.get(exc.status_code, "error"), message,
                              headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal_error", "internal server error (details are in the server log)")

    # ------------------------------------------------------------------ public

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "version": __version__, "ready": state.components is not None}

    @app.get("/", include_in_schema=False)
    async def inspector() -> Response:
        html = (STATIC_DIR / "inspector.html").read_bytes()
        return Response(html, media_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": INSPECTOR_CSP, "X-Content-Type-Options": "nosniff",
                                 "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"})

    @app.get("/metrics", tags=["ops"])
    async def metrics() -> Response:
        return Response(generate_latest(state.registry), media_type=CONTENT_TYPE_LATEST)

    # ------------------------------------------------------------------ sessions

    @app.post("/v1/sessions", status_code=201, response_model=SessionCreated, tags=["sessions"])
    async def create_session() -> dict[str, Any]:
        return await state.run(state.store.create_session)

    @app.get("/v1/sessions", tags=["sessions"])
    async def list_sessions(limit: int = 100) -> dict[str, Any]:
        limit = max(1, min(limit, 1000))
        return {"sessions": await state.run(state.store.list_sessions, limit)}

    @app.get("/v1/sessions/{session_id}", tags=["sessions"])
    async def get_session(session_id: str) -> dict[str, Any]:
        session = await state.session(session_id)
        assert session.fm is not None
        info = await state.run(state.store.get_session, session_id)
        if info is None:
            state.forget(session_id)
            raise APIError(404, "not_found", "unknown session")
        rows = {r["id"]: r for r in await state.run(state.store.messages, session_id)}
        messages = [message_out(m, rows.get(m.id)) for m in session.fm.messages]
        return {**info, "messages": messages}

    @app.delete("/v1/sessions/{session_id}", tags=["sessions"])
    async def delete_session(session_id: str) -> dict[str, Any]:
        if not valid_session_id(session_id):
            raise APIError(404, "not_found", "unknown session")
        session = state.sessions.get(session_id)
        if session is not None:
            async with session.lock:
                deleted = await state.run(state.store.delete_session, session_id)
                state.forget(session_id)
        else:
            deleted = await state.run(state.store.delete_session, session_id)
        if not deleted:
            raise APIError(404, "not_found", "unknown session")
        return {"id": session_id, "deleted": True}

    @app.post("/v1/sessions/{session_id}/messages", status_code=201, tags=["sessions"])
    async def append_message(session_id: str, body: MessageIn) -> dict[str, Any]:
        message_id = uuid.uuid4().hex

        def work(session: SessionState) -> tuple[Any, dict[str, Any]]:
            assert session.fm is not None
            try:
                message = session.fm.add_messages(
                    [{"role": body.role, "content": body.content, "importance": body.importance, "id": message_id}])[0]
            except ValueError as exc:
                raise APIError(422, "invalid_request", str(exc)) from None
            try:  # artifacts are already in SQLite; the row commits last, then we acknowledge
                row = state.store.append_message(session_id, message_id, body.role, body.content, body.importance)
            except BaseException:
                session.fm = None  # the in-memory history may now be ahead of the store: reload it
                raise
            return message, row

        for _ in range(3):
            session = await state.session(session_id)
            async with session.lock:
                # Invalidated, deleted or evicted while we waited: look it up again (or 404 if deleted).
                # Holding the lock of the registered state also keeps it from being evicted meanwhile.
                if session.fm is None or state.sessions.get(session_id) is not session:
                    continue
                try:
                    message, row = await state.run(work, session)
                except UnknownSession:
                    state.forget(session_id)
                    raise APIError(404, "not_found", "unknown session") from None
                break
        else:
            raise APIError(503, "unavailable", "the session could not be loaded, retry")
        state.appended.inc()
        return message_out(message, row)

    @app.post("/v1/sessions/{session_id}/context", tags=["context"])
    async def session_context(session_id: str, body: ContextOptions) -> JSONResponse:
        session = await state.session(session_id)
        fm = session.fm
        assert fm is not None
        ctx, original = await state.run(build, fm, body.query, body.budget_tokens, body.system_preamble, body.render, body.packing)
        return context_response(ctx, original, "/v1/sessions/{session_id}/context")

    @app.post("/v1/context", tags=["context"])
    async def stateless_context(body: StatelessContextRequest) -> JSONResponse:
        def work() -> tuple[Context, int]:
            fm = state.manager(state.stateless_cache)
            try:
                fm.add_messages([m.model_dump() for m in body.messages])
            except ValueError as exc:
                raise APIError(422, "invalid_request", str(exc)) from None
            return build(fm, body.query, body.budget_tokens, body.system_preamble, body.render, body.packing)

        ctx, original = await state.run(work)
        return context_response(ctx, original, "/v1/context")

    def context_response(ctx: Context, original: int, route: str) -> JSONResponse:
        headers = afm_headers(ctx, original)
        state.tokens_saved.labels(route=route).inc(int(headers["X-AFM-Tokens-Saved"]))
        state.tokens_used.labels(route=route).inc(ctx.tokens_used)
        return JSONResponse(ctx.to_dict(), headers=headers)

    # ------------------------------------------------------------------ OpenAI-compatible

    @app.post("/v1/chat/completions", tags=["openai"])
    async def chat_completions(body: ChatCompletionRequest, request: Request) -> Response:
        msgs = body.messages
        texts = [_text_content(m.content) for m in msgs]
        for m, text in zip(msgs, texts):
            if m.role not in ROLES and m.role != "developer":
                raise APIError(422, "invalid_request", f"unknown role {m.role[:32]!r}; expected one of {', '.join(ROLES)}")
            _check_content(text)
        user_positions = [i for i, m in enumerate(msgs) if m.role == "user"]
        if not user_positions:
            raise APIError(422, "invalid_request", "messages must contain a user message (the query)")
        q = user_positions[-1]
        start, preamble = 0, None
        if msgs[0].role in ("system", "developer") and q > 0:
            start, preamble = 1, texts[0]
        history = [{"role": "system" if m.role == "developer" else m.role, "content": t}
                   for m, t in zip(msgs[start:q], texts[start:q])]
        trailing = [m.model_dump(exclude_none=True) for m in msgs[q + 1:]]  # after the query: sent verbatim
        options = body.afm or AFMOptions()
        budget = options.budget_tokens or settings.budget
        params = BuiltinModel.params(body) if state.builtin is not None else {}
        if state.builtin is not None:  # the built-in model's window: the prompt (other tokenizer) + the reply
            budget = min(budget, max(64, int((settings.n_ctx - params["max_tokens"]) * 0.75)))

        def work() -> tuple[Context, int]:
            fm = state.manager(state.stateless_cache)
            try:
                fm.add_messages(history)
            except ValueError as exc:
                raise APIError(422, "invalid_request", str(exc)) from None
            return build(fm, texts[q], budget, preamble, options.render, options.packing)

        ctx, original = await state.run(work)
        headers = afm_headers(ctx, original)
        state.tokens_saved.labels(route="/v1/chat/completions").inc(int(headers["X-AFM-Tokens-Saved"]))
        state.tokens_used.labels(route="/v1/chat/completions").inc(ctx.tokens_used)
        packed = list(ctx.messages) + trailing

        if state.builtin is not None:
            return await builtin_answer(packed, body, params, headers)
        return await forward(packed, body, request, headers)

    def _check_content(text: str) -> None:
        if len(text.encode("utf-8", "surrogatepass")) > MAX_CONTENT_BYTES:
            raise APIError(422, "invalid_request", f"a message is longer than {MAX_CONTENT_BYTES} bytes")

    async def forward(packed: list[dict[str, Any]], body: ChatCompletionRequest, request: Request,
                      headers: dict[str, str]) -> Response:
        assert state.http is not None and settings.upstream
        payload = body.model_dump(exclude_unset=True, exclude={"afm", "messages"})
        payload["messages"] = packed
        out_headers = {"content-type": "application/json", "accept": request.headers.get("accept", "*/*")}
        if settings.upstream_api_key:
            out_headers["authorization"] = f"Bearer {settings.upstream_api_key}"
        elif not settings.api_key and request.headers.get("authorization"):
            out_headers["authorization"] = request.headers["authorization"]  # the client's own upstream key
        upstream_request = state.http.build_request("POST", settings.upstream + "/v1/chat/completions",
                                                    content=json.dumps(payload).encode(), headers=out_headers)
        try:
            response = await state.http.send(upstream_request, stream=True)
        except httpx.HTTPError as exc:
            log.warning("upstream unreachable: %s", type(exc).__name__)
            raise APIError(502, "upstream_error", f"the upstream could not be reached ({type(exc).__name__})") from None
        media_type = response.headers.get("content-type", "application/json")
        if not body.stream or "text/event-stream" not in media_type:
            try:
                content = await response.aread()
            except httpx.HTTPError as exc:
                raise APIError(502, "upstream_error", f"the upstream failed ({type(exc).__name__})") from None
            finally:
                await response.aclose()
            return Response(content, status_code=response.status_code, media_type=media_type, headers=headers)

        async def passthrough() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    yield chunk
            except httpx.HTTPError as exc:
                log.warning("upstream stream broke: %s", type(exc).__name__)
            finally:
                await response.aclose()

        return StreamingResponse(passthrough(), status_code=response.status_code, media_type=media_type,
                                 headers={**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def builtin_answer(packed: list[dict[str, Any]], body: ChatCompletionRequest, params: dict[str, Any],
                             headers: dict[str, str]) -> Response:
        builtin = state.builtin
        assert builtin is not None
        messages = [{"role": m["role"], "content": m.get("content") or ""} for m in packed]
        loop = asyncio.get_running_loop()
        if not body.stream:
            result = await loop.run_in_executor(builtin.executor, builtin.complete, messages, params)
            return JSONResponse(result, headers=headers)
        # Streaming: load (and fail) before the 200 goes out, then produce chunks on the llama thread.
        await loop.run_in_executor(builtin.executor, builtin._ensure)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        cancelled = threading.Event()

        def emit(item: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        loop.run_in_executor(builtin.executor, builtin.stream, messages, params, emit, cancelled)

        async def events() -> AsyncIterator[bytes]:
            try:
                while True:
                    item = await queue.get()
                    if item is None:
                        yield b"data: [DONE]\n\n"
                        return
                    yield b"data: " + json.dumps(item).encode() + b"\n\n"
            finally:
                cancelled.set()

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    # ------------------------------------------------------------------ ASGI layers (outermost last)
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_body_bytes)
    app.add_middleware(AuthMiddleware, api_key=settings.api_key)
    app.add_middleware(MetricsMiddleware, requests=state.requests, latency=state.latency)
    return app


# ---------------------------------------------------------------------------------------- running


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_server(
    host: str = "127.0.0.1",
    port: int = 8765,
    db: Path = Path("afm-local.db"),
    upstream: str | None = None,
    api_key_env: str | None = None,
    budget: int = 2000,
    threads: int = 1,
    *,
    upstream_api_key_env: str | None = None,
    workers: int = 2,
    synchronous: str = "NORMAL",
    abstractive: bool = True,
) -> None:
    """Serve until interrupted. ``api_key_env`` names the environment variable holding the key; when it is
    given the variable must be set and non-empty (the server refuses to start open by mistake)."""
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    api_key = None
    if api_key_env:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise SystemExit(f"--api-key-env {api_key_env}: that environment variable is not set or empty")
    upstream_key = os.environ.get(upstream_api_key_env) if upstream_api_key_env else None
    if not _is_loopback(host) and not api_key:
        log.warning("listening on %s without an API key: anyone who can reach this port can read every session", host)
    settings = ServerSettings(db=Path(db), upstream=upstream, api_key=api_key, upstream_api_key=upstream_key,
                              budget=budget, threads=threads, workers=workers, synchronous=synchronous,
                              abstractive=abstractive)
    app = create_app(settings)
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False, proxy_headers=False,
                timeout_keep_alive=5, limit_concurrency=512, access_log=False)
