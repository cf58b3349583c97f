"""What the server needs, validated once and written once: the address, the store, the upstream, limits and
the engine config. Every default of ``afm-local serve`` is a default here; the command line builds one
``ServerSettings`` from its flags and ``run_server`` takes it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..core.config import AFMConfig, check_budget
from ..core.errors import InvalidInput
from ..core.protocols import Components
from .schemas import MAX_BUDGET
from .store.tenant import Quota
from .store.url import is_postgres_url

MAX_BODY_BYTES = 16 << 20  # 16 MiB: a message's images arrive as base64 (AFMConfig.max_attachment_bytes, 10 MiB)
BUILTIN_N_CTX = 2048  # the built-in answerer's window
DEFAULT_DB = Path("afm-local.db")  # a SQLite file, or a postgresql:// URL shared by several workers

SYNCHRONOUS = ("NORMAL", "FULL", "EXTRA")  # SQLite's durability levels that afm-local accepts


@dataclass
class ServerSettings:
    """Everything ``run_server`` and ``create_app`` need. ``components`` may be injected (shared, loaded)."""

    host: str = "127.0.0.1"
    port: int = 8765
    workers: int = 1  # processes sharing the port (uvicorn's supervisor); more than one wants PostgreSQL
    db: Path | str = field(default_factory=lambda: os.environ.get("AFM_DB") or DEFAULT_DB)  # $AFM_DB, else the file
    upstream: str | None = None  # OpenAI-compatible: /v1/chat/completions and /v1/responses are forwarded there
    anthropic_upstream: str | None = None  # /v1/messages is forwarded there (default: the upstream)
    api_key: str | None = None  # --api-key-env's key: the one-tenant default (tenant "default")
    db_key: str | None = None  # --db-key-env's key: a SQLCipher-encrypted SQLite file
    upstream_api_key: str | None = None
    budget: int = 2000
    threads: int = 1
    concurrency: int = 2  # requests doing model or store work at once in this process (a bounded pool)
    synchronous: str = "NORMAL"  # SQLite: WAL + NORMAL survives a process kill; FULL also a power loss
    abstractive: bool = True  # run config.compressor_model (none by default) in the background
    max_body_bytes: int = MAX_BODY_BYTES
    max_sessions_in_memory: int = 1000
    max_tenant_caches: int = 16  # tenants whose stateless artifact cache stays in memory
    rate_limit: float = 100.0  # requests a second per key, per worker process; 0: none
    rate_burst: int = 200
    quota_sessions: int | None = 10_000  # per tenant; None: no limit
    quota_messages: int | None = 1_000_000
    quota_bytes: int | None = 1 << 30  # message content, UTF-8
    model_path: Path | None = None  # built-in answerer; default: the manifest's qwen2.5-coder GGUF
    n_ctx: int = BUILTIN_N_CTX
    upstream_timeout_s: float = 600.0
    # Browsers (server.middleware.BrowserGuardMiddleware): Host names accepted besides the loopback names and
    # the bind address ("*": any), and the web origins whose pages may call the API (CORS answered for them).
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    # Connections (uvicorn): a request's headers must arrive within header_timeout_s of the connection opening
    # or of the previous response; an idle keep-alive connection closes after keep_alive_s; past
    # max_connections open connections (or requests in flight) every request is answered 503.
    header_timeout_s: float = 10.0
    body_timeout_s: float = 60.0  # a request's body must all arrive within this of its headers (else 408)
    keep_alive_s: float = 5.0
    max_connections: int = 512
    # Fairness: requests of one tenant in flight at once (the others queue behind them); None: one less than
    # ``concurrency`` (at least 1), so that another tenant always finds a slot. Not applied while no key is stored
    # (an open server, or --api-key-env's key alone): then only one tenant can call.
    tenant_concurrency: int | None = None
    tenant_queue: int = 32  # requests of one tenant waiting for its turn before the next gets a 429
    auth_failures_per_minute: int = 30  # wrong or missing keys from one address a minute before it gets 429s
    otel: bool = False  # OpenTelemetry spans of every ingest and build (afm_local.integrations.otel, the otel extra)
    config: AFMConfig = field(default_factory=AFMConfig)
    components: Components | None = None

    def __post_init__(self) -> None:
        self.db = str(self.db) if is_postgres_url(self.db) else Path(self.db)
        if isinstance(self.db, str) and self.synchronous.upper() != "NORMAL":
            raise InvalidInput("--synchronous is a SQLite setting; PostgreSQL commits are always flushed")
        if self.synchronous.upper() not in SYNCHRONOUS:
            raise InvalidInput(f"synchronous must be one of {', '.join(SYNCHRONOUS)}")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise InvalidInput("concurrency must be a positive integer")
        if not isinstance(self.max_body_bytes, int) or self.max_body_bytes < 1:
            raise InvalidInput("--max-body-bytes must be a positive integer")
        if not isinstance(self.workers, int) or self.workers < 1:
            raise InvalidInput("workers must be a positive integer")
        check_budget(self.budget, MAX_BUDGET, "budget")
        self.upstream = _base_url(self.upstream, "upstream")
        self.anthropic_upstream = _base_url(self.anthropic_upstream, "anthropic upstream")
        if self.api_key is not None and not self.api_key:
            raise InvalidInput("the API key is empty")
        if self.db_key is not None and isinstance(self.db, str):
            raise InvalidInput("--db-key-env encrypts the SQLite store; see docs/server.md for PostgreSQL")
        self.allowed_hosts = tuple(h.strip().lower() for h in self.allowed_hosts if h.strip())
        self.allowed_origins = tuple(_origin(o) for o in self.allowed_origins if o.strip())
        if self.tenant_concurrency is None:
            self.tenant_concurrency = max(1, self.concurrency - 1)
        if not isinstance(self.tenant_concurrency, int) or self.tenant_concurrency < 1:
            raise InvalidInput("tenant concurrency must be a positive integer")
        if not isinstance(self.tenant_queue, int) or self.tenant_queue < 1:
            raise InvalidInput("--tenant-queue must be a positive integer")
        if min(self.header_timeout_s, self.body_timeout_s, self.keep_alive_s) <= 0 or self.max_connections < 1:
            raise InvalidInput("header and body timeouts, keep-alive and connection limit must be positive")
        if self.auth_failures_per_minute < 1:
            raise InvalidInput("--auth-failures-per-minute must be a positive integer")
        if self.rate_limit < 0 or self.rate_burst < 1:
            raise InvalidInput("rate limit must be 0 (none) or positive, with a burst of at least 1")
        for name in ("quota_sessions", "quota_messages", "quota_bytes"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                flag = "--" + name.replace("_", "-")
                raise InvalidInput(f"{flag} must be a positive integer (0 on the command line: no limit)")

    @property
    def quota(self) -> Quota:
        return Quota(self.quota_sessions, self.quota_messages, self.quota_bytes)

    def upstream_for(self, api: str) -> str | None:
        """Where a proxy of ``api`` (``openai`` or ``anthropic``) forwards to: Anthropic's format to its own
        upstream when one is given."""
        return (self.anthropic_upstream or self.upstream) if api == "anthropic" else self.upstream


def _base_url(url: str | None, name: str) -> str | None:
    """An upstream's base URL, checked, without a trailing slash or ``/v1`` (the routes add it)."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInput(f"{name} must be an http(s) URL, got {url!r}")
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _origin(origin: str) -> str:
    """A web origin as browsers send it (``scheme://host[:port]``, lower case, no path), checked."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        raise InvalidInput(f"an allowed origin is scheme://host[:port], got {origin!r}")
    return f"{parts.scheme}://{parts.netloc}".lower()
