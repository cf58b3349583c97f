"""The one artifact cache: everything derived from a message, keyed by component and content hash.

A message's embedding, importance, compressed text, topic and token count depend only on its text
and on the component that made them, so they are computed once per (kind, component, sha256) and
reused across messages, sessions and restarts; so do an attachment's type, OCR text, thumbnail,
document text and page count, keyed by the sha256 of its bytes. Each kind has its own typed accessor
(``cache.embeddings``, ``cache.importance``, ...), which also knows how to write its values as bytes
for an optional persistent backend (the session store).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

import numpy as np

from ..core.parts import MediaInfo, Thumbnail
from ..core.types import Classification, Compression, Sentences
from ..core.vocabulary import Importance

T = TypeVar("T")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CacheBackend(Protocol):
    """Persistent storage for cache entries (implemented by the session stores)."""

    def load_artifact(self, kind: str, key: str) -> bytes | None: ...

    def save_artifact(self, kind: str, key: str, data: bytes) -> None: ...


@dataclass(frozen=True, slots=True)
class Kind(Generic[T]):
    """One kind of artifact: its name in the backend and how its values are written as bytes."""

    name: str
    encode: Callable[[T], bytes]
    decode: Callable[[bytes], T]


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def _unjson(data: bytes) -> Any:
    return json.loads(data.decode())


EMBEDDING: Kind[np.ndarray] = Kind(
    "embedding",
    lambda v: np.asarray(v, dtype=np.float32).tobytes(),
    lambda b: np.frombuffer(b, dtype=np.float32).copy(),
)
IMPORTANCE: Kind[Classification] = Kind(
    "importance",
    lambda v: _json({"label": v.label.value, "scores": v.scores, "source": v.source}),
    lambda b: (lambda r: Classification(Importance(r["label"]), r["scores"], r["source"]))(_unjson(b)),
)
COMPRESSED: Kind[Compression] = Kind(
    "compressed",
    lambda v: _json({"text": v.text, "method": v.method}),
    lambda b: (lambda r: Compression(r["text"], r["method"]))(_unjson(b)),
)
TOPIC: Kind[str] = Kind("topic", _json, _unjson)
TOKENS: Kind[int] = Kind("tokens", _json, _unjson)
CONSTRAINTS: Kind[str] = Kind("constraints", _json, _unjson)
MEDIA: Kind[MediaInfo] = Kind(
    "media",
    lambda v: _json([v.kind, v.mime, v.width, v.height]),
    lambda b: MediaInfo(*_unjson(b)),
)
OCR: Kind[str] = Kind("ocr", _json, _unjson)
DOCUMENT_TEXT: Kind[str] = Kind("document_text", _json, _unjson)
PAGES: Kind[int] = Kind("pages", _json, _unjson)
THUMBNAIL: Kind[Thumbnail] = Kind(
    "thumbnail",
    lambda v: v.width.to_bytes(2, "big") + v.height.to_bytes(2, "big") + v.data,
    lambda b: Thumbnail(b[4:], int.from_bytes(b[:2], "big"), int.from_bytes(b[2:4], "big")),
)


def _encode_sentences(sentences: Sentences) -> bytes:
    head = _json({"spans": sentences.spans, "tokens": sentences.tokens})
    return len(head).to_bytes(4, "big") + head + np.asarray(sentences.vectors, dtype=np.float32).tobytes()


def _decode_sentences(data: bytes) -> Sentences:
    size = int.from_bytes(data[:4], "big")
    head = _unjson(data[4 : 4 + size])
    spans = tuple((int(a), int(b)) for a, b in head["spans"])
    vectors = np.frombuffer(data[4 + size :], dtype=np.float32).reshape(len(spans), -1).copy()
    return Sentences(spans, tuple(int(t) for t in head["tokens"]), vectors)


SENTENCES: Kind[Sentences] = Kind("sentences", _encode_sentences, _decode_sentences)


class Artifacts(Generic[T]):
    """The cache's view of one kind: typed get, peek, put and get-or-compute by (component, text hash)."""

    def __init__(self, cache: ArtifactCache, kind: Kind[T]) -> None:
        self._cache, self._kind = cache, kind

    def get(self, component: str, text_hash: str) -> T | None:
        """The cached value, or ``None`` counted as a miss (the caller is about to compute it)."""
        value = self.peek(component, text_hash)
        if value is None:
            self._cache.count_miss()
        return value

    def peek(self, component: str, text_hash: str) -> T | None:
        """The cached value (counted as a hit), or ``None`` without counting a miss: for optional
        artifacts such as a background model's result, whose absence computes nothing."""
        return cast("T | None", self._cache.lookup(self._kind.name, f"{component}:{text_hash}", self._kind.decode))

    def put(self, component: str, text_hash: str, value: T) -> None:
        self._cache.store(self._kind.name, f"{component}:{text_hash}", value, lambda: self._kind.encode(value))

    def get_or_compute(self, component: str, text_hash: str, compute: Callable[[], T]) -> T:
        value = self.get(component, text_hash)
        if value is None:
            value = compute()
            self.put(component, text_hash, value)
        return value


class ArtifactCache:
    """In-memory LRU over an optional persistent backend; safe to share between threads."""

    def __init__(self, backend: CacheBackend | None = None, max_entries: int = 200_000) -> None:
        self._backend = backend
        self._max = max_entries
        self._data: OrderedDict[tuple[str, str], object] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.embeddings = Artifacts(self, EMBEDDING)
        self.importance = Artifacts(self, IMPORTANCE)
        self.compressed = Artifacts(self, COMPRESSED)
        self.topics = Artifacts(self, TOPIC)
        self.tokens = Artifacts(self, TOKENS)
        self.constraints = Artifacts(self, CONSTRAINTS)
        self.sentences = Artifacts(self, SENTENCES)
        self.media = Artifacts(self, MEDIA)
        self.ocr = Artifacts(self, OCR)
        self.document_text = Artifacts(self, DOCUMENT_TEXT)
        self.pages = Artifacts(self, PAGES)
        self.thumbnails = Artifacts(self, THUMBNAIL)

    def count_miss(self) -> None:
        with self._lock:
            self.misses += 1

    def lookup(self, kind: str, key: str, decode: Callable[[bytes], object]) -> object | None:
        """A value from memory, else from the backend (then remembered); hits are counted."""
        with self._lock:
            if (kind, key) in self._data:
                self._data.move_to_end((kind, key))
                self.hits += 1
                return self._data[(kind, key)]
        if self._backend is not None:
            data = self._backend.load_artifact(kind, key)
            if data is not None:
                value = decode(data)
                self._remember((kind, key), value)
                with self._lock:
                    self.hits += 1
                return value
        return None

    def store(self, kind: str, key: str, value: object, encode: Callable[[], bytes]) -> None:
        """Remember a value, and write it to the backend when there is one (encoded only then)."""
        self._remember((kind, key), value)
        if self._backend is not None:
            self._backend.save_artifact(kind, key, encode())

    def _remember(self, key: tuple[str, str], value: object) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._max:
                self._data.popitem(last=False)
