"""One conversation's history as columns: what ``build_context`` reads, one array row per message.

Every per-message number that building a context needs (embedding, importance, the classifier's
certainty, token counts per fidelity, letter counts for the language rule) is written once, at ingest,
into preallocated arrays that grow by doubling. A build then takes a consistent ``Snapshot`` under
the manager's lock (slices and one list copy, no Python work per message) and runs array
operations over it. ``Message`` records are replaced, never mutated, when the background model
refines a text, so a snapshot's records always match its token counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.lexical import Bm25Index
from ..core.overflow import restatements
from ..core.packing import NEVER_FITS
from ..core.types import Message
from ..core.vocabulary import CRITICAL, Importance, importance_code
from ..text.facts import restates
from ..text.lexicon import letter_counts
from ..text.rules import hard_constraint_hits
from ..text.terms import terms

# token columns: the three fidelities the packer chooses from, the constraint sentences, the reference line
TOKEN_COLUMNS = 5
CONSTRAINTS, REFERENCE = 3, 4


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The history at one moment: records and columns of equal length, safe to read without a lock."""

    messages: list[Message]
    vectors: np.ndarray  # float32 (n, d), unit rows
    classes: np.ndarray  # int8 importance codes
    pinned: np.ndarray  # bool: CRITICAL by the user's word (tag or API), never demoted
    confidence: np.ndarray  # float64: the classifier's P(CRITICAL); 1.0 where the user decided
    tokens: np.ndarray  # int64 (n, 5): full, compressed (never above full), placeholder, constraints, reference
    letters: np.ndarray  # int64 (n, 2): Cyrillic and Latin letters, for the language rule
    restated_by: np.ndarray  # int64: the newest later CRITICAL message restating this one, or -1
    excerptable: np.ndarray  # bool: a query-aware excerpt can stand for it (Message.excerptable)
    hard: np.ndarray  # bool: a user's message the hard-constraint rules name (text.rules.hard_constraint_hits)
    sentences: SentencesSnapshot
    lexical: Bm25Index  # append-only: read for the first len(messages) messages only

    def __len__(self) -> int:
        return len(self.messages)

    def lexical_scores(self, query: str) -> np.ndarray:
        """BM25 of every message of this snapshot for the query's terms."""
        return self.lexical.scores(terms(query), len(self.messages))


@dataclass(frozen=True, slots=True)
class SentencesSnapshot:
    """Every message's sentences (sentences) in one set of columns, messages in order."""

    vectors: np.ndarray  # float32 (m, d), unit rows
    owners: np.ndarray  # int64 (m,): the message of each sentence
    starts: np.ndarray  # int64 (n,): where each message's sentences begin
    tokens: np.ndarray  # int64 (m,): a sentence's cost alone


class SentenceColumns:
    """Append-only columns of the sentences of a history's messages; a message without sentences is one sentence,
    its own vector and token count."""

    def __init__(self, dim: int, capacity: int = 128) -> None:
        self._vectors = np.zeros((capacity, dim), dtype=np.float32)
        self._owners = np.zeros(capacity, dtype=np.int64)
        self._tokens = np.zeros(capacity, dtype=np.int64)
        self._starts = np.zeros(capacity, dtype=np.int64)
        self._messages = 0
        self._size = 0

    def append(self, message: Message, vector: np.ndarray) -> None:
        vectors = message.sentences.vectors if message.sentences is not None else vector[None]
        tokens = message.sentences.tokens if message.sentences is not None else (message.tokens_full,)
        k, m = len(vectors), self._size
        while m + k > len(self._owners):
            self._grow(2 * len(self._owners))
        if self._vectors.shape[1] != vectors.shape[1]:
            self._vectors = np.zeros((len(self._owners), vectors.shape[1]), dtype=np.float32)
        if self._messages == len(self._starts):  # a new array: a snapshot's view of the old one stays valid
            self._starts = np.concatenate([self._starts, np.zeros(len(self._starts), dtype=np.int64)])
        self._vectors[m : m + k], self._tokens[m : m + k] = vectors, tokens
        self._owners[m : m + k] = self._messages
        self._starts[self._messages] = m
        self._messages, self._size = self._messages + 1, m + k

    def snapshot(self, n: int) -> SentencesSnapshot:
        """Views of the first ``n`` messages' sentences: rows below those are never written again."""
        m = int(self._starts[n]) if n < self._messages else self._size
        return SentencesSnapshot(self._vectors[:m], self._owners[:m], self._starts[:n], self._tokens[:m])

    def _grow(self, capacity: int) -> None:
        for name in ("_vectors", "_owners", "_tokens"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)


def token_row(m: Message) -> tuple[int, int, int, int, int]:
    constraints = m.tokens_constraints if m.constraints else int(NEVER_FITS)
    return m.tokens_full, min(m.tokens_compressed, m.tokens_full), m.tokens_placeholder, constraints, m.tokens_reference


class History:
    """Append-only columns; not thread-safe on its own (the manager holds a lock around it)."""

    def __init__(self, dim: int, restatement_threshold: float, capacity: int = 64) -> None:
        self.messages: list[Message] = []
        self._threshold = restatement_threshold
        self._vectors = np.zeros((capacity, dim), dtype=np.float32)
        self._classes = np.zeros(capacity, dtype=np.int8)
        self._pinned = np.zeros(capacity, dtype=bool)
        self._confidence = np.zeros(capacity, dtype=np.float64)
        self._tokens = np.zeros((capacity, TOKEN_COLUMNS), dtype=np.int64)
        self._letters = np.zeros((capacity, 2), dtype=np.int64)
        self._restated_by = np.full(capacity, -1, dtype=np.int64)
        self._excerptable = np.zeros(capacity, dtype=bool)
        self._hard = np.zeros(capacity, dtype=bool)
        self._sentences = SentenceColumns(dim)
        self._lexical = Bm25Index()

    def __len__(self) -> int:
        return len(self.messages)

    def append(self, message: Message, vector: np.ndarray) -> None:
        n = len(self.messages)
        if n == len(self._classes):
            self._grow(2 * n)
        if self._vectors.shape[1] != len(vector):  # the first vector fixes the dimension
            if n:
                raise ValueError(
                    f"embedding of dimension {len(vector)} in a history of dimension {self._vectors.shape[1]}"
                )
            self._vectors = np.zeros((len(self._classes), len(vector)), dtype=np.float32)
        self.messages.append(message)
        self._vectors[n] = vector
        self._write(n, message)
        self._sentences.append(message, vector)
        self._lexical.add(terms(message.content))
        if self._classes[n] == CRITICAL:  # similar by embedding, and saying everything the older one said
            critical = self._classes[: n + 1] == CRITICAL
            similar = restatements(self._vectors[: n + 1], critical, self._threshold)
            self._restated_by[[i for i in similar.tolist() if restates(self.messages[i].content, message.content)]] = n

    def replace(self, index: int, message: Message) -> None:
        """Swap in a refined record (a background model's summary or topic) and its token counts."""
        self.messages[index] = message
        self._write(index, message)

    def _write(self, i: int, m: Message) -> None:
        self._classes[i] = importance_code(m.importance)
        self._pinned[i] = m.pinned
        decided = m.importance_source == "tag" or not m.importance_scores
        self._confidence[i] = 1.0 if decided else float(m.importance_scores.get(Importance.CRITICAL.value, 0.0))
        self._tokens[i] = token_row(m)
        self._letters[i] = letter_counts(m.content)
        self._excerptable[i] = m.excerptable
        self._hard[i] = m.role == "user" and bool(hard_constraint_hits(m.content))

    def _grow(self, capacity: int) -> None:
        def grown(a: np.ndarray) -> np.ndarray:
            out = np.zeros((capacity, *a.shape[1:]), dtype=a.dtype)
            out[: len(a)] = a
            return out

        self._vectors, self._classes, self._pinned = grown(self._vectors), grown(self._classes), grown(self._pinned)
        self._excerptable, self._hard = grown(self._excerptable), grown(self._hard)
        self._confidence, self._tokens, self._letters = (
            grown(self._confidence),
            grown(self._tokens),
            grown(self._letters),
        )
        restated_by = np.full(capacity, -1, dtype=np.int64)
        restated_by[: len(self._restated_by)] = self._restated_by
        self._restated_by = restated_by

    def snapshot(self) -> Snapshot:
        """Copies of the columns a refined record rewrites; views of the append-only ones (a row below
        ``n`` is never written again, and growing allocates new arrays), so a snapshot costs no copy of
        the embeddings."""
        n = len(self.messages)
        return Snapshot(
            list(self.messages),
            self._vectors[:n],
            self._classes[:n].copy(),
            self._pinned[:n].copy(),
            self._confidence[:n].copy(),
            self._tokens[:n].copy(),
            self._letters[:n],
            self._restated_by[:n].copy(),
            self._excerptable[:n].copy(),
            self._hard[:n].copy(),
            self._sentences.snapshot(n),
            self._lexical,
        )

    def vectors(self) -> np.ndarray:
        return self._vectors[: len(self.messages)]
