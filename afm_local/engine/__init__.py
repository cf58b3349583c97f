"""The engine: ``FocusManager`` over injected components (ingest, build, the cache, the background worker)."""

from .cache import ArtifactCache
from .manager import FocusManager, set_default_components

__all__ = ["ArtifactCache", "FocusManager", "set_default_components"]
