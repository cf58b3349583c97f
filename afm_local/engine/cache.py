"""The one artifact cache: everything derived from a message, keyed by component and content hash.

A message's embedding, importance, compressed form, topic and token count depend only on its text
and on the component that made them, so they are computed once per (kind, component, sha256) and
reused across messages, sessions and restarts. An optional backend (the SQLite store) persists
entries; the cache itself serialises values so the backend only sees bytes.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Callable, Protocol, TypeVar

import numpy as np

from ..core.types import Classification, Compression, Importance

T = TypeVar("T")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CacheBackend(Protocol):
    """Persistent storage for cache entries (implemented by the SQLite store)."""

    def load_artifact(self, kind: str, key: str) -> bytes | None: ...

    def save_artifact(self, kind: str, key: str, data: bytes) -> None: ...


def _encode(kind: str, value: Any) -> bytes:
    if kind == "embedding":
        return np.asarray(value, dtype=np.float32).tobytes()
    if kind == "importance":
        return json.dumps({"label": value.label.value, "scores": value.scores, "source": value.source}).encode()
    if kind == "compressed":
        return json.dumps({"text": value.text, "method": value.method}).encode()
    return json.dumps(value).encode()


def _decode(kind: str, data: bytes) -> Any:
    if kind == "embedding":
        return np.frombuffer(data, dtype=np.float32).copy()
    raw = json.loads(data.decode())
    if kind == "importance":
        return Classification(Importance(raw["label"]), raw["scores"], raw["source"])
    if kind == "compressed":
        return Compression(raw["text"], raw["method"])
    return raw


class ArtifactCache:
    """In-memory LRU over an optional persistent backend; safe to share between threads."""

    def __init__(self, backend: CacheBackend | None = None, max_entries: int = 200_000) -> None:
        self._backend = backend
        self._max = max_entries
        self._data: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, kind: str, component: str, text_hash: str) -> Any | None:
        """The cached value, or ``None`` counted as a miss (the caller is about to compute it)."""
        value = self.peek(kind, component, text_hash)
        if value is None:
            with self._lock:
                self.misses += 1
        return value

    def peek(self, kind: str, component: str, text_hash: str) -> Any | None:
        """The cached value (counted as a hit), or ``None`` without counting a miss: for optional
        artifacts such as a background model's result, whose absence computes nothing."""
        key = (kind, f"{component}:{text_hash}")
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
        if self._backend is not None:
            data = self._backend.load_artifact(*key)
            if data is not None:
                value = _decode(kind, data)
                self._remember(key, value)
                with self._lock:
                    self.hits += 1
                return value
        return None

    def put(self, kind: str, component: str, text_hash: str, value: Any) -> None:
        key = (kind, f"{component}:{text_hash}")
        self._remember(key, value)
        if self._backend is not None:
            self._backend.save_artifact(*key, _encode(kind, value))

    def get_or_compute(self, kind: str, component: str, text_hash: str, compute: Callable[[], T]) -> T:
        value = self.get(kind, component, text_hash)
        if value is None:
            value = compute()
            self.put(kind, component, text_hash, value)
        return value

    def _remember(self, key: tuple[str, str], value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._max:
                self._data.popitem(last=False)
