"""What the server needs, validated once and written once: the address, the store, the upstream, limits and
the engine config. Every default of ``afm-local serve`` is a default here; the command line builds one
``ServerSettings`` from its flags and ``run_server`` takes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..core.config import AFMConfig, check_budget
from ..core.errors import InvalidInput
from ..core.protocols import Components
from .schemas import MAX_BUDGET
from .store.url import is_postgres_url

MAX_BODY_BYTES = 16 << 20  # 16 MiB: a message's images arrive as base64 (AFMConfig.max_attachment_bytes, 10 MiB)
BUILTIN_N_CTX = 2048  # the built-in answerer's window

SYNCHRONOUS = ("NORMAL", "FULL", "EXTRA")  # SQLite's durability levels that afm-local accepts


@dataclass
class ServerSettings:
    """Everything ``run_server`` and ``create_app`` need. ``components`` may be injected (shared, loaded)."""

    host: str = "127.0.0.1"
    port: int = 8765
    workers: int = 1  # processes sharing the port (uvicorn's supervisor); more than one wants PostgreSQL
    db: Path | str = Path("afm-local.db")  # a SQLite file, or a postgresql:// URL shared by several workers
    upstream: str | None = None
    api_key: str | None = None
    upstream_api_key: str | None = None
    budget: int = 2000
    threads: int = 1
    concurrency: int = 2  # requests doing model or store work at once in this process (a bounded pool)
    synchronous: str = "NORMAL"  # SQLite: WAL + NORMAL survives a process kill; FULL also a power loss
    abstractive: bool = True  # run config.compressor_model (none by default) in the background
    max_body_bytes: int = MAX_BODY_BYTES
    max_sessions_in_memory: int = 1000
    model_path: Path | None = None  # built-in answerer; default: the manifest's qwen2.5-coder GGUF
    n_ctx: int = BUILTIN_N_CTX
    upstream_timeout_s: float = 600.0
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
        if not isinstance(self.workers, int) or self.workers < 1:
            raise InvalidInput("workers must be a positive integer")
        check_budget(self.budget, MAX_BUDGET, "budget")
        if self.upstream is not None:
            parts = urlsplit(self.upstream)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise InvalidInput(f"upstream must be an http(s) URL, got {self.upstream!r}")
            self.upstream = self.upstream.rstrip("/")
            if self.upstream.endswith("/v1"):
                self.upstream = self.upstream[: -len("/v1")]
        if self.api_key is not None and not self.api_key:
            raise InvalidInput("the API key is empty")
