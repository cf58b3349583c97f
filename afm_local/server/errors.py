"""The one JSON error shape of the HTTP API, for routes and ASGI layers alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi.responses import JSONResponse


class APIError(Exception):
    """Raised anywhere in a request; answered as ``{"error": {"type", "message", ...}}`` with ``status``."""

    def __init__(self, status: int, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.extra = status, kind, message, extra


def error_body(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message, **extra}}


def error_response(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(error_body(kind, message, **extra), status_code=status, headers=headers)


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


async def send_json(
    send: Callable[..., Any], status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """The error shape from an ASGI layer, which answers before the app runs (no Response object there)."""
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
            + (headers or []),
        }
    )
    await send({"type": "http.response.body", "body": data})
