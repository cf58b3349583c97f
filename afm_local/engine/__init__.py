"""The engine: ``FocusManager`` over injected components (ingest, build, the cache, the background worker)."""

from .cache import ArtifactCache
from .manager import FocusManager

__all__ = ["ArtifactCache", "FocusManager"]
