"""The ASGI layers in front of the app: body-size limit, API key and tenant, rate limit (request metrics
and the access log: ``server.metrics``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import anyio

from ..core.errors import StoreError
from .auth import OPEN, KeyRing, Principal, RateLimiter
from .errors import send_error

DRAIN_LIMIT = 64 << 20  # an oversized body is read (and discarded) up to this, so the client sees the 413
PUBLIC_PATHS = {"/healthz", "/"}  # "/" is the static inspector page: no data, it asks for the key itself


class BodyLimitMiddleware:
    """Reads the whole body (at most ``limit`` bytes, whatever Content-Length says) before the app runs.

    An oversized body gets a 413 JSON error; so does a declared Content-Length over the limit, without
    trusting it for the accepted case. A JSON body that is not valid UTF-8 gets a 400 here, before any
    parsing.
    """

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

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
            # Every body this API accepts is JSON: parse it as JSON whatever Content-Type says (curl -d
            # sends form-encoded), so a client gets the JSON error it can act on.
            headers = [(k, v) for k, v in scope.get("headers", []) if k != b"content-type"]
            scope["headers"] = headers + [(b"content-type", b"application/json")]  # in place: outer layers read scope
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


class AuthMiddleware:
    """``Authorization: Bearer <key>`` on every route but the public ones (``server.auth``): the request's
    ``Principal`` (tenant and key id) goes into ``scope["state"]["principal"]``, where the routes'
    dependencies read it; then the key's rate limit."""

    def __init__(self, app: Any, keyring: KeyRing, limiter: RateLimiter) -> None:
        self.app, self.keyring, self.limiter = app, keyring, limiter

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http" or scope.get("path") in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        try:
            principal = await anyio.to_thread.run_sync(self._principal, _bearer(scope))
        except StoreError as exc:  # the keys could not be read: nothing is served, as for any store failure
            await send_error(send, scope, 503, "storage_unavailable", str(exc))
            return
        if principal is None:
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
        await self.app(scope, receive, send)

    def _principal(self, token: bytes | None) -> Principal | None:
        """The key's principal; with no valid key, the open default when the server has no key at all."""
        principal = self.keyring.resolve(token) if token else None
        if principal is None and self.keyring.is_open():
            return OPEN
        return principal


def _bearer(scope: dict[str, Any]) -> bytes | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return bytes(value[7:].strip())
    return None
