"""Fake components for fast unit tests of the engine's pure logic (never stand-ins for a model under test).

* ``WordCounter``: one token per word or punctuation mark;
* ``BagEmbedder``: a hashed bag of lower-cased words, L2-normalised, so texts that share words are similar;
* the real ``RuleClassifier`` and ``ExtractiveCompressor`` are pure text tools and are used as they are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from afm_local.core.protocols import Components
from afm_local.text.extractive import ExtractiveCompressor
from afm_local.text.rules import RuleClassifier
from afm_local.text.topics import KeyphraseTopicer

_TOKEN = re.compile(r"\w+|[^\w\s]")


class WordCounter:
    name = "words"

    def count(self, text: str) -> int:
        return len(_TOKEN.findall(text))


class BagEmbedder:
    name = "bag"
    dim = 64

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:  # symmetric: kind is ignored
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out

    def embed_sentences(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]):
        """Each span embedded on its own (no context): good enough for the pure core's tests."""
        return self.embed(texts), [self.embed([t[a:b] for a, b in s]) for t, s in zip(texts, spans)]


def fake_components() -> Components:
    counter = WordCounter()
    return Components(counter, BagEmbedder(), RuleClassifier(), ExtractiveCompressor(counter), KeyphraseTopicer())
