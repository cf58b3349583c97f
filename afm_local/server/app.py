"""``afm-local serve``: AFM over HTTP, fully local.

``create_app(settings)`` assembles the FastAPI app from the routes (``server.routes``), the ASGI layers
(``server.middleware``) and the error mapping; ``run_server(settings)`` serves it with uvicorn (on
127.0.0.1 by default, ``ServerSettings``). See docs/server.md for the API, the security model and the limits.

Errors: routes raise ``APIError`` for HTTP-only conditions; every ``AFMError`` from the engine or the
store is mapped here, by class, to one status and one JSON error shape.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator, Callable, MutableMapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route

from .._version import __version__
from ..core.errors import (
    AFMError,
    AttachmentTooLarge,
    BudgetTooSmall,
    InvalidInput,
    ModelError,
    QuotaExceeded,
    StoreError,
    StoreFull,
    StoreUnavailable,
    UnknownSession,
    UnsupportedAttachment,
    missing_extra,
)
from ..local import local_components
from .auth import FailureLimiter
from .connections import configure, uvicorn_options
from .errors import STATUS_KIND, APIError, native_response
from .metrics import MetricsMiddleware
from .middleware import AuthMiddleware, BodyLimitMiddleware, BrowserGuardMiddleware, allowed_host_names
from .routes import chat, context, formats, ops, sessions, tenant
from .settings import ServerSettings
from .state import AppState
from .store import open_store

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger("afm_local.server")
MCP_PATH = "/mcp"

# AFMError class -> (status, error type); the first match in this order wins.
ERROR_STATUS: tuple[tuple[type[AFMError], int, str], ...] = (
    (BudgetTooSmall, 422, "budget_too_small"),
    (AttachmentTooLarge, 413, "attachment_too_large"),
    (UnsupportedAttachment, 415, "unsupported_media_type"),
    (InvalidInput, 422, "invalid_request"),
    (UnknownSession, 404, "not_found"),
    (QuotaExceeded, 413, "quota_exceeded"),
    (StoreFull, 507, "storage_full"),
    (StoreUnavailable, 503, "storage_unavailable"),
    (StoreError, 503, "storage_unavailable"),
    (ModelError, 503, "model_unavailable"),
)


def afm_error_response(exc: AFMError, path: str = "") -> JSONResponse:
    """The answer to an engine or store error, in the shape of the API ``path`` speaks."""
    for cls, status, kind in ERROR_STATUS:
        if isinstance(exc, cls):
            if isinstance(exc, BudgetTooSmall):
                return native_response(path, status, kind, str(exc), minimum_budget=exc.minimum)
            if isinstance(exc, UnknownSession):
                return native_response(path, status, kind, "unknown session")
            param = exc.param if isinstance(exc, InvalidInput) else None
            return native_response(path, status, kind, str(exc), param=param)
    return native_response(path, 500, "internal_error", str(exc))


def create_app(settings: ServerSettings) -> FastAPI:
    state = AppState(settings)
    mcp = _mcp_server(state)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if state.components is None:
            state.components = await anyio.to_thread.run_sync(
                lambda: local_components(settings.config, threads=settings.threads, abstractive=settings.abstractive)
            )
        if settings.upstream or settings.anthropic_upstream:
            # trust_env=False: no proxy or netrc from the environment; the upstream is the only peer.
            state.http = httpx.AsyncClient(
                trust_env=False,
                follow_redirects=False,
                timeout=httpx.Timeout(settings.upstream_timeout_s, connect=10.0),
            )
        log.info(
            "afm-local server ready (db=%s, upstream=%s, auth=%s)",
            state.store.description,
            settings.upstream or settings.anthropic_upstream or "built-in",
            "open" if state.keyring.is_open() else "keys",
        )
        try:
            async with AsyncExitStack() as stack:
                if mcp is not None:
                    await stack.enter_async_context(mcp.session_manager.run())
                yield
        finally:
            if state.http is not None:
                await state.http.aclose()
            if state.builtin is not None:
                state.builtin.close()
            state.store.close()

    app = FastAPI(
        title="afm-local",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
        description="Adaptive Focus Memory over HTTP, fully local. Every route but /healthz and the "
        "static inspector page requires `Authorization: Bearer <key>` when a key is set; a key belongs to "
        "a tenant and sees only that tenant's data.",
    )
    app.state.afm = state
    _add_error_handlers(app)
    for module in (ops, sessions, context, chat, formats, tenant):
        app.include_router(module.router)
    if mcp is not None:
        _mount_mcp(app, mcp, settings.host)
    # ASGI layers, outermost last
    app.add_middleware(BodyLimitMiddleware, limit=settings.max_body_bytes, timeout=settings.body_timeout_s)
    app.add_middleware(
        AuthMiddleware,
        keyring=state.keyring,
        limiter=state.rate_limiter,
        failures=FailureLimiter(settings.auth_failures_per_minute),
        tenant_concurrency=settings.tenant_concurrency,
        tenant_queue=settings.tenant_queue,
    )
    app.add_middleware(
        BrowserGuardMiddleware,
        hosts=allowed_host_names(settings.host, settings.allowed_hosts),
        port=settings.port,
        origins=settings.allowed_origins,
    )
    app.add_middleware(MetricsMiddleware, requests=state.metrics.requests, latency=state.metrics.latency)
    return app


def _mcp_server(state: AppState) -> MCPServer | None:
    """The MCP server over this app's state, or ``None`` (logged) when the ``mcp`` extra is not installed."""
    try:
        from .mcp import http_scope, mcp_server
    except ImportError as exc:
        if not missing_extra(exc, "mcp"):
            raise
        log.info("no %s endpoint: the MCP SDK is not installed (pip install 'afm-local[mcp]')", MCP_PATH)
        return None
    return mcp_server(http_scope(state))


class NamedRoute(Route):
    """A Starlette route that, like FastAPI's, names itself in the request scope when it matches, so that
    metrics and the access log show its path (``/mcp``), not ``unmatched``."""

    def matches(self, scope: MutableMapping[str, Any]) -> tuple[Match, MutableMapping[str, Any]]:
        match, child = super().matches(scope)
        if match != Match.NONE:
            child = {**child, "route": self}
        return match, child


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(app: Any, scope: MutableMapping[str, Any]) -> list[str]:
    """Every method some route of ``app`` answers in full at the request's path (the ``Allow`` of a 405),
    asked of the routes themselves, included routers too."""
    return [
        method
        for method in HTTP_METHODS
        if any(route.matches({**scope, "method": method})[0] == Match.FULL for route in app.router.routes)
    ]


def _mount_mcp(app: FastAPI, mcp: MCPServer, host: str) -> None:
    """``/mcp``: streamable HTTP, stateless, so any worker answers any call. POST only: a stateless server
    sends nothing unasked, so the GET stream the SDK would hold open forever answers 405, as the MCP spec
    allows. The OpenAPI schema describes it beside the routes (clients, the fuzz tests)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from .mcp import OPENAPI_PATH_ITEM

    # Host and Origin are checked once, for every route, by BrowserGuardMiddleware (its allow-lists are the
    # operator's): the SDK's own loopback-only check is off, so that /mcp answers exactly what the others do.
    own_check_off = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app_routes = mcp.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, host=host, transport_security=own_check_off
    ).routes
    for route in app_routes:
        assert isinstance(route, Route), route  # no SDK auth routes: AuthMiddleware guards /mcp
        app.router.routes.append(NamedRoute(route.path, endpoint=route.endpoint, methods=["POST"]))
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            build()["paths"][MCP_PATH] = OPENAPI_PATH_ITEM
        return app.openapi_schema or build()

    app.openapi = openapi  # type: ignore[method-assign]


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> JSONResponse:
        return native_response(request.url.path, exc.status, exc.kind, exc.message, **exc.extra)

    @app.exception_handler(AFMError)
    async def _afm_error(request: Request, exc: AFMError) -> JSONResponse:
        return afm_error_response(exc, request.url.path)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        path = request.url.path
        if any(e.get("type") == "json_invalid" for e in errors):
            ctx = next((e.get("ctx") or {} for e in errors if e.get("type") == "json_invalid"), {})
            return native_response(
                path, 400, "invalid_json", f"request body is not valid JSON: {ctx.get('error', 'parse error')}"
            )
        details = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))[:300], "type": e.get("type")}
            for e in errors[:20]
        ]
        summary = "; ".join(f"{'.'.join(d['loc'][1:]) or 'body'}: {d['msg']}" for d in details[:5])
        param = ".".join(details[0]["loc"][1:]) if details else ""
        return native_response(path, 422, "invalid_request", summary, details=details, param=param or None)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else "error"
        path = request.url.path
        if message == "There was an error parsing the body":
            return native_response(path, 400, "invalid_json", "request body could not be parsed as JSON")
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:  # Starlette names the methods of the first route at the path only
            headers["Allow"] = ", ".join(allowed_methods(request.app, request.scope))
        kind = STATUS_KIND.get(exc.status_code, "error")
        return native_response(path, exc.status_code, kind, message, headers=headers)

    @app.exception_handler(Exception)
    async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        message = "internal server error (details are in the server log)"
        return native_response(request.url.path, 500, "internal_error", message)


# ---------------------------------------------------------------------------------------- running


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class WorkerApp:
    """The ASGI app of one worker process of ``--workers N``. The settings reach the process pickled
    over the spawn pipe (never through argv or the environment, so the API key stays out of ``ps``),
    and the app, its store connections and its models are made there, at the first lifespan event."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._app: FastAPI | None = None

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if self._app is None:
            _configure_logging()
            self._app = create_app(self.settings)
        await self._app(scope, receive, send)


def _configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s[%(process)d]: %(message)s")


def run_server(settings: ServerSettings) -> None:
    """Serve until interrupted, in this process or, with ``settings.workers > 1``, in that many worker
    processes sharing the port (uvicorn's supervisor restarts one that dies). Store errors at start are
    ``AFMError``s: the CLI prints them as one line."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    _configure_logging()
    if not _is_loopback(settings.host) and not settings.api_key:
        log.warning(
            "listening on %s without an API key: anyone who can reach this port can read every session", settings.host
        )
    options = uvicorn_options(settings)
    if settings.workers == 1:
        server = uvicorn.Server(configure(uvicorn.Config(create_app(settings), **options), settings))
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        if not server.started:  # as uvicorn.run: the port was taken, or the app failed to start
            raise SystemExit(3)
        return
    # Open (and migrate) the store once here, so that a bad --db is one line before any worker starts.
    open_store(settings.db, synchronous=settings.synchronous, pool_size=1, encryption_key=settings.db_key).close()
    config = configure(uvicorn.Config(WorkerApp(settings), workers=settings.workers, **options), settings)
    Multiprocess(config, sockets=[config.bind_socket()]).run()
