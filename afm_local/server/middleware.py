"""The ASGI layers in front of the app: the browser guard (Host allow-list, Origin check, CORS only for the
configured origins), body-size limit and JSON-only bodies, API key and tenant, failed-authentication and
rate limits, per-tenant concurrency, request metrics and the access log."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import anyio

from ..core.errors import StoreError
from .auth import OPEN, FailureLimiter, KeyRing, Principal, RateLimiter
from .errors import send_error

access_log = logging.getLogger("afm_local.access")

DRAIN_LIMIT = 64 << 20  # an oversized body is read (and discarded) up to this, so the client sees the 413
MAX_TENANT_LIMITERS = 10_000
PUBLIC_PATHS = {"/healthz", "/"}  # "/" is the static inspector page: no data, it asks for the key itself


class BodyLimitMiddleware:
    """Reads the whole body (at most ``limit`` bytes, whatever Content-Length says) before the app runs.

    An oversized body gets a 413 JSON error; so does a declared Content-Length over the limit, without
    trusting it for the accepted case. A body that has not all arrived ``timeout`` seconds after the
    headers gets a 408 and the connection is closed (uvicorn has no body-read timeout of its own). A JSON
    body that is not valid UTF-8 gets a 400 here, before any parsing.
    """

    def __init__(self, app: Any, limit: int, timeout: float = 60.0) -> None:
        self.app, self.limit, self.timeout = app, limit, timeout

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = None
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await send_error(send, scope, 400, "bad_request", "invalid Content-Length")
                    return
        chunks: list[bytes] = []
        total = 0
        too_big = declared is not None and declared > self.limit
        more = True
        with anyio.move_on_after(self.timeout) as reading:
            while more and not too_big:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                total += len(chunk)
                more = message.get("more_body", False)
                if total > self.limit:
                    too_big = True
                    break
                chunks.append(chunk)
        if reading.cancelled_caught:
            message_text = f"the request body did not arrive within {self.timeout:g} s"
            await send_error(send, scope, 408, "request_timeout", message_text, [(b"connection", b"close")])
            return
        if too_big:
            await self._refuse(scope, receive, send, total, more)
            return
        body = b"".join(chunks)
        if body:
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as exc:
                await send_error(
                    send, scope, 400, "invalid_utf8", f"request body is not valid UTF-8 (byte {exc.start})"
                )
                return
        if body and scope.get("method") in ("POST", "PUT", "PATCH"):
            # Every body this API accepts is JSON, and only a body that says so is read: a web page can send
            # text/plain, form or multipart bodies to any address without asking, never application/json.
            media_type = _header(scope, b"content-type").split(b";")[0].strip().lower()
            if media_type != b"application/json" and not media_type.endswith(b"+json"):
                shown = media_type.decode("latin-1")[:80] or "none"
                message = f"request bodies are JSON: send Content-Type: application/json (got {shown})"
                await send_error(send, scope, 415, "unsupported_media_type", message)
                return
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(
        self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any], received: int, more: bool
    ) -> None:
        """413 for a body over the limit, after letting the client finish sending, so that it reads the answer."""
        while more and received < DRAIN_LIMIT:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            received += len(message.get("body", b""))
            more = message.get("more_body", False)
        message = f"request body is larger than {self.limit} bytes"
        await send_error(send, scope, 413, "request_too_large", message, [(b"connection", b"close")])


def _header(scope: dict[str, Any], name: bytes) -> bytes:
    """The first value of header ``name`` (lower case), or ``b""``."""
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value)
    return b""


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
CORS_METHODS = b"GET, POST, DELETE"
CORS_HEADERS = b"authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id"


def allowed_host_names(bind_host: str, extra: tuple[str, ...]) -> frozenset[str] | None:
    """The ``Host`` names a server bound to ``bind_host`` answers: the loopback names, the bind address
    itself and ``extra``; ``None`` (any) when ``extra`` holds ``*`` or, with no ``extra``, the server is
    bound to every address (0.0.0.0 or ::), whose names it cannot know."""
    if "*" in extra or (not extra and bind_host in ("0.0.0.0", "::", "")):
        return None
    bind = f"[{bind_host}]" if ":" in bind_host else bind_host
    return frozenset({*LOOPBACK_NAMES, bind.lower(), *extra})


class BrowserGuardMiddleware:
    """What keeps a web page from driving the server through its visitor's browser, on every route:

    * ``Host`` must name this server (``allowed_host_names``, with this port when a port is given): a page
      that rebinds its own name to 127.0.0.1 sends its own name, and gets 403.
    * A request with an ``Origin`` (every cross-site ``fetch`` and form post has one) must come from this
      server's own origin or one of ``origins``; a browser's ``Sec-Fetch-Site: cross-site`` without an
      allowed origin is refused too (navigations to a page excepted): 403.
    * CORS is off unless ``origins`` are configured: then those origins' preflights are answered and their
      responses carry ``Access-Control-Allow-Origin``; nothing is ever answered with ``*``.

    JSON-only bodies (a page can send ``text/plain`` without a preflight) are ``BodyLimitMiddleware``'s.
    """

    def __init__(self, app: Any, hosts: frozenset[str] | None, port: int, origins: tuple[str, ...]) -> None:
        self.app, self.hosts, self.port, self.origins = app, hosts, str(port).encode(), frozenset(origins)

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host").lower()
        if not self._host_allowed(host):
            await send_error(send, scope, 403, "forbidden", "this server does not answer to that Host name")
            return
        origin = _header(scope, b"origin").lower().decode("latin-1")
        same = origin in (f"http://{host.decode('latin-1')}", f"https://{host.decode('latin-1')}")
        allowed = bool(origin) and (same or origin in self.origins)
        if origin and not allowed:
            await send_error(send, scope, 403, "forbidden", "requests from other web origins are not accepted")
            return
        site, mode = _header(scope, b"sec-fetch-site"), _header(scope, b"sec-fetch-mode")
        navigation = mode == b"navigate" and scope.get("method") == "GET"
        if site == b"cross-site" and not allowed and not navigation:
            await send_error(send, scope, 403, "forbidden", "cross-site requests are not accepted")
            return
        if not (allowed and not same):
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "OPTIONS" and _header(scope, b"access-control-request-method"):
            await send(
                {
                    "type": "http.response.start",
                    "status": 204,
                    "headers": [
                        *self._cors(origin),
                        (b"access-control-allow-methods", CORS_METHODS),
                        (b"access-control-allow-headers", CORS_HEADERS),
                        (b"access-control-max-age", b"600"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return

        async def with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self._cors(origin)]}
            await send(message)

        await self.app(scope, receive, with_cors)

    def _host_allowed(self, host: bytes) -> bool:
        if self.hosts is None or not host:  # no Host at all (HTTP/1.0 tools): no browser sends that
            return True
        name, port = host, b""
        if host.startswith(b"["):  # [::1]:8765
            end = host.find(b"]")
            name, port = host[: end + 1], host[end + 2 :] if host[end + 1 : end + 2] == b":" else b""
        elif b":" in host:
            name, _, port = host.partition(b":")
        return name.decode("latin-1") in self.hosts and port in (b"", self.port)

    @staticmethod
    def _cors(origin: str) -> list[tuple[bytes, bytes]]:
        return [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]


class AuthMiddleware:
    """``Authorization: Bearer <key>`` on every route but the public ones (``server.auth``): the request's
    ``Principal`` (tenant and key id) goes into ``scope["state"]["principal"]``, where the routes'
    dependencies read it; then the key's rate limit, then the tenant's concurrency limit, held while the
    request runs, so that a tenant's requests queue behind its own and never take every slot of the
    process (a server with no stored key, open or with ``--api-key-env``'s key alone, has one tenant only:
    no limit); past ``tenant_queue`` of its requests waiting, a tenant gets 429s, so that its queue cannot
    take every connection the server accepts. An address whose keys failed too often within
    a minute gets 429s before its key is looked up."""

    def __init__(
        self,
        app: Any,
        keyring: KeyRing,
        limiter: RateLimiter,
        failures: FailureLimiter | None = None,
        tenant_concurrency: int | None = None,
        tenant_queue: int = 32,
    ) -> None:
        self.app, self.keyring, self.limiter = app, keyring, limiter
        self.failures, self.tenant_concurrency, self.tenant_queue = failures, tenant_concurrency, tenant_queue
        self._tenants: dict[str, anyio.CapacityLimiter] = {}

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or scope.get("path") in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        source = (scope.get("client") or ("-",))[0]
        wait = self.failures.retry_after(source) if self.failures is not None else 0.0
        if wait > 0:  # no store lookup for this address: only a key already verified still works
            principal, shared = self.keyring.resolve_known(_bearer(scope)), True
            if principal is None:
                message = f"too many failed authentications from this address; retry in {math.ceil(wait)} s"
                retry = [(b"retry-after", str(math.ceil(wait)).encode())]
                await send_error(send, scope, 429, "rate_limited", message, retry)
                return
        else:
            try:
                principal, shared = await anyio.to_thread.run_sync(self._principal, _bearer(scope))
            except StoreError as exc:  # the keys could not be read: nothing is served, as for any store failure
                await send_error(send, scope, 503, "storage_unavailable", str(exc))
                return
        if principal is None:
            if self.failures is not None:
                self.failures.failed(source)
            message = "missing or wrong API key (Authorization: Bearer <key>)"
            await send_error(send, scope, 401, "unauthorized", message, [(b"www-authenticate", b"Bearer")])
            return
        scope.setdefault("state", {})["principal"] = principal
        wait = self.limiter.wait_needed(principal.key_id)
        if wait > 0:
            message = f"rate limit of this key exceeded ({self.limiter.rate:g} requests/s); retry in {wait:.1f} s"
            retry = [(b"retry-after", str(math.ceil(wait)).encode())]
            await send_error(send, scope, 429, "rate_limited", message, retry)
            return
        if self.tenant_concurrency is None or not shared:
            await self.app(scope, receive, send)
            return
        limiter = self._tenant_limiter(principal.tenant)
        if limiter.statistics().tasks_waiting >= self.tenant_queue:  # its queue would hold every connection
            message = f"this tenant already has {self.tenant_queue} requests waiting; retry in 1 s"
            await send_error(send, scope, 429, "rate_limited", message, [(b"retry-after", b"1")])
            return
        async with limiter:
            await self.app(scope, receive, send)

    def _tenant_limiter(self, tenant: str) -> anyio.CapacityLimiter:
        limiter = self._tenants.get(tenant)
        if limiter is None:
            if len(self._tenants) >= MAX_TENANT_LIMITERS:  # forget the idle ones
                self._tenants = {t: lim for t, lim in self._tenants.items() if lim.borrowed_tokens}
            assert self.tenant_concurrency is not None
            limiter = self._tenants[tenant] = anyio.CapacityLimiter(self.tenant_concurrency)
        return limiter

    def _principal(self, token: bytes | None) -> tuple[Principal | None, bool]:
        """The key's principal (with no valid key, the open default when the server has no key at all), and
        whether other tenants can call this server too (a key was stored: the tenant limit applies)."""
        principal = self.keyring.resolve(token) if token else None
        if principal is None and self.keyring.is_open():
            return OPEN, False
        return principal, not self.keyring.one_tenant()


def _bearer(scope: dict[str, Any]) -> bytes | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return bytes(value[7:].strip())
    return None
