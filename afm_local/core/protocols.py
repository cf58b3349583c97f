"""The small interfaces behind which every model sits.

The algorithm (scoring, packing, rendering) only sees these, so tests and benchmarks can inject any
real implementation: the ONNX embedder, a GGUF compressor, a rule-only classifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from .types import Classification, Compression, Utterance


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way the target model does."""

    name: str

    def count(self, text: str) -> int: ...


EmbedKind = Literal["passage", "query"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of ``dim`` numbers, one row per text.

    ``kind`` says what the texts are: stored messages ("passage") or the current query ("query").
    An asymmetric model (multilingual-e5-small) embeds them with different prefixes, so the engine
    caches the two kinds apart; a symmetric one (MiniLM) gives the same vector for both."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray: ...

    def embed_sentences(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Passage vectors of ``texts`` and, from the same pass, a vector per character span of each text
        (its sentences: ``(len(spans[i]), dim)`` unit rows), so excerpts cost no second encoding."""
        ...


@runtime_checkable
class ImportanceClassifier(Protocol):
    """Labels messages CRITICAL / RELEVANT / TRIVIAL from their text (tags already removed) and role."""

    name: str

    def classify(self, items: Sequence[Utterance]) -> list[Classification]: ...


@runtime_checkable
class Compressor(Protocol):
    """Produces a shorter, faithful form of a message at roughly ``ratio`` of its tokens."""

    name: str

    def compress(self, text: str, ratio: float) -> Compression: ...


@runtime_checkable
class Topicer(Protocol):
    """Names what a message is about in a few words, for its placeholder."""

    name: str

    def topic(self, text: str) -> str: ...


@dataclass(slots=True)
class Components:
    """Everything the engine injects: one token counter, embedder, classifier and compressor, shared.

    ``compressor`` is the instant extractive path that is always there; ``abstractive`` is optional and
    runs in the background (``afm_local.local.local_components`` builds the on-device set)."""

    counter: TokenCounter
    embedder: Embedder
    classifier: ImportanceClassifier
    compressor: Compressor
    topicer: Topicer
    abstractive: Compressor | None = None
