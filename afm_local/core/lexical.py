"""A lexical ranking of the history: an append-only inverted index scored with BM25.

The engine appends one message's terms at ingest and scores a query against any prefix of the history
(a snapshot), so a turn costs a few array operations per query term, never a re-index. The scores are
Lucene's BM25 as ``bm25s`` computes it by default (the tests hold them to it): idf
``log(1 + (N - df + 0.5) / (df + 0.5))`` times ``tf / (tf + k1 (1 - b + b dl / avgdl))``.
Which words a text's terms are (stemming, stop words) is the caller's business: ``text.terms``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

K1 = 1.5
B = 0.75


class Bm25Index:
    """Terms of each message in order; ``scores`` reads only the first ``n`` messages, so a snapshot taken
    under the owner's lock stays consistent while later messages are appended."""

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self._docs: dict[str, list[int]] = {}
        self._tf: dict[str, list[int]] = {}
        self._lengths: list[int] = []
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # postings as arrays, made when a query reads them

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, terms: Sequence[str]) -> None:
        doc = len(self._lengths)
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            self._docs.setdefault(term, []).append(doc)
            self._tf.setdefault(term, []).append(tf)
        self._lengths.append(len(terms))

    def scores(self, query: Sequence[str], n: int | None = None) -> np.ndarray:
        """BM25 of every one of the first ``n`` messages (all by default) for the query's terms."""
        n = len(self._lengths) if n is None else n
        out = np.zeros(n, dtype=np.float64)
        if not n:
            return out
        lengths = np.asarray(self._lengths[:n], dtype=np.float64)
        norm = self.k1 * (1 - self.b + self.b * lengths / max(float(lengths.mean()), 1e-9))
        for term in dict.fromkeys(query):
            ids, tf = self._postings(term)
            k = int(np.searchsorted(ids, n))
            if not k:
                continue
            ids, tf = ids[:k], tf[:k]
            idf = np.log(1 + (n - k + 0.5) / (k + 0.5))
            out[ids] += idf * tf / (tf + norm[ids])
        return out

    def _postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """A term's message ids and frequencies as arrays, remade only when a message added it since."""
        docs = self._docs.get(term, [])
        cached = self._arrays.get(term)
        if cached is None or len(cached[0]) != len(docs):
            cached = (np.asarray(docs, dtype=np.int64), np.asarray(self._tf.get(term, []), dtype=np.float64))
            self._arrays[term] = cached
        return cached
