"""What ``create_app`` needs, validated once: the store, the upstream, limits, the engine config."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..core.config import AFMConfig
from ..core.errors import InvalidInput
from ..core.protocols import Components
from .answerer import BUILTIN_N_CTX
from .middleware import MAX_BODY_BYTES
from .schemas import MAX_BUDGET
from .store import is_postgres_url

@dataclass
class ServerSettings:
    """Everything ``create_app`` needs. ``components`` may be injected (shared, already loaded)."""

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
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise InvalidInput("concurrency must be a positive integer")
        if not isinstance(self.budget, int) or not 1 <= self.budget <= MAX_BUDGET:
            raise InvalidInput(f"budget must be between 1 and {MAX_BUDGET}")
        if self.upstream is not None:
            parts = urlsplit(self.upstream)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise InvalidInput(f"upstream must be an http(s) URL, got {self.upstream!r}")
            self.upstream = self.upstream.rstrip("/")
            if self.upstream.endswith("/v1"):
                self.upstream = self.upstream[: -len("/v1")]
        if self.api_key is not None and not self.api_key:
            raise InvalidInput("the API key is empty")
