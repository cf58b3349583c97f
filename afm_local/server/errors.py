"""The JSON error shapes of the HTTP API, for routes and ASGI layers alike: afm's own on its own routes, and on
the proxy routes the shape of the API each one speaks (``UPSTREAM_API``), so the client's own SDK reads it:
OpenAI's ``{"error": {"message", "type", "param", "code"}}`` and Anthropic's ``{"type": "error", "error":
{"type", "message"}}``. Both keep afm's own kind of error (``code`` for OpenAI, beside the type for
Anthropic), and an ``error.type`` and ``error.message``, as afm's shape does."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from fastapi.responses import JSONResponse


class APIError(Exception):
    """Raised anywhere in a request; answered as ``{"error": {"type", "message", ...}}`` with ``status``."""

    def __init__(self, status: int, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.extra = status, kind, message, extra


def error_body(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message, **extra}}


STATUS_KIND = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    502: "upstream_error",
    503: "unavailable",
}


async def send_error(
    send: Callable[..., Any],
    scope: dict[str, Any],
    status: int,
    kind: str,
    message: str,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An error from an ASGI layer, which answers before the app runs (no Response object there), in the shape
    of the API the request's path speaks."""
    data = json.dumps(native_body(scope.get("path", ""), status, kind, message)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
            + (headers or []),
        }
    )
    await send({"type": "http.response.body", "body": data})


API = Literal["openai", "anthropic"]
UPSTREAM_API: dict[str, API] = {  # proxy route -> the API it speaks (its upstream's key header, its errors)
    "/v1/chat/completions": "openai",
    "/v1/responses": "openai",
    "/v1/messages": "anthropic",
}
OPENAI_TYPES = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}
ANTHROPIC_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
}


def native_body(path: str, status: int, kind: str, message: str, **extra: Any) -> dict[str, Any]:
    """An error body in the shape of the API ``path`` speaks (afm's own shape on afm's own routes)."""
    api = UPSTREAM_API.get(path)
    if api == "openai":
        fallback = "server_error" if status >= 500 else "invalid_request_error"
        error = {"message": message, "type": OPENAI_TYPES.get(status, fallback), "param": extra.pop("param", None)}
        return {"error": {**error, "code": kind, **extra}}
    if api == "anthropic":
        fallback = "api_error" if status >= 500 else "invalid_request_error"
        extra.pop("param", None)
        return {
            "type": "error",
            "error": {"type": ANTHROPIC_TYPES.get(status, fallback), "message": message, "code": kind, **extra},
        }
    return error_body(kind, message, **{key: value for key, value in extra.items() if value is not None})


def native_response(
    path: str, status: int, kind: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(native_body(path, status, kind, message, **extra), status_code=status, headers=headers)
