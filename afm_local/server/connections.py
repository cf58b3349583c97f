"""Connections in front of the app: uvicorn's options, and a deadline for a request's headers.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but that timer is reset by
every byte received and is not started when a connection opens: a client that opens a connection and
sends its headers a byte at a time, or never, holds it forever, and past ``limit_concurrency`` open
connections every request (``/healthz`` included) is answered 503. The protocols here close a connection
whose request headers have not all arrived ``header_timeout_s`` after it opened or after its previous
response, whatever trickles in meanwhile; a request whose headers arrived is the app's (its body is read
under the body limit, and the server's work under its own limits).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from .settings import ServerSettings

DEFAULT_HEADER_TIMEOUT_S = 10.0


class _HeaderDeadline:
    """Mixed into a uvicorn HTTP protocol: a deadline for each request's headers (``config.header_timeout_s``).
    The protocol's ``cycle`` is replaced when a request's headers are complete; the deadline closes the
    connection when, at its end, the cycle is still the one it was armed with."""

    config: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    cycle: Any
    _deadline: asyncio.TimerHandle | None = None
    _armed_cycle: Any = None

    def _arm(self) -> None:
        self._disarm()
        self._armed_cycle = self.cycle
        timeout = getattr(self.config, "header_timeout_s", DEFAULT_HEADER_TIMEOUT_S)
        self._deadline = self.loop.call_later(timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.cycle is self._armed_cycle and not self.transport.is_closing():
            self.transport.close()

    # The protocol's own hooks, extended (the protocol class follows this one in the MRO).
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]


class DeadlineH11Protocol(_HeaderDeadline, H11Protocol):
    """uvicorn's h11 protocol with the header deadline."""


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class DeadlineHttpToolsProtocol(_HeaderDeadline, HttpToolsProtocol):
        """uvicorn's httptools protocol with the header deadline."""

    HTTP_PROTOCOL: type[asyncio.Protocol] = DeadlineHttpToolsProtocol
except ImportError:  # httptools is optional in uvicorn: h11 then, as uvicorn's "auto" would choose
    HTTP_PROTOCOL = DeadlineH11Protocol


def uvicorn_options(settings: ServerSettings) -> dict[str, Any]:
    """``uvicorn.Config``'s keyword arguments for ``settings`` (``header_timeout_s`` is set on the config
    afterwards: ``configure``)."""
    return {
        "host": settings.host,
        "port": settings.port,
        "log_level": "info",
        "server_header": False,
        "proxy_headers": False,
        "http": HTTP_PROTOCOL,
        "timeout_keep_alive": settings.keep_alive_s,
        "limit_concurrency": settings.max_connections,
        "h11_max_incomplete_event_size": 16 * 1024,  # headers larger than 16 KiB: 400 (h11's own default)
        "access_log": False,
    }


def configure(config: Any, settings: ServerSettings) -> Any:
    """The deadline the protocols read, on a ``uvicorn.Config`` (it travels with it to spawned workers)."""
    config.header_timeout_s = settings.header_timeout_s
    return config
