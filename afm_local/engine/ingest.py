"""Ingest: one message in, every artifact AFM needs from it out, each computed once.

The cache's key scheme lives here and only here (``ArtifactKeys``): an artifact is keyed by the
component that made it (and, for compressed forms, the ratio) and the sha256 of the text, so it is
shared by every session and survives restarts when the cache has a persistent backend.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..core.config import AFMConfig
from ..core.errors import InvalidInput
from ..core.protocols import Components, EmbedKind
from ..core.render import reference_line
from ..core.tags import parse_tag
from ..core.types import ROLES, Classification, Compression, Importance, Message, Utterance
from ..text.extractive import constraint_sentences
from .cache import ArtifactCache, content_hash


@dataclass(frozen=True, slots=True)
class ArtifactKeys:
    """The component part of every cache key, derived once from the components and the config."""

    counter: str
    passage: str  # embedder, for history messages
    query: str  # embedder, for the current query (an asymmetric model gives it another vector)
    classifier: str
    compressed: str  # extractive compressor @ ratio
    constraints: str  # classifier + extractive compressor @ ratio: a long constraint's constraint-sentences form
    topic: str
    abstract_compressed: str | None  # background model @ ratio, when it proposes summaries
    abstract_topic: str | None  # background model, when it names topics

    @classmethod
    def of(cls, c: Components, cfg: AFMConfig) -> "ArtifactKeys":
        model = c.abstractive
        return cls(
            counter=c.counter.name,
            passage=c.embedder.name,
            query=f"{c.embedder.name}+query",
            classifier=c.classifier.name,
            compressed=f"{c.compressor.name}@{cfg.compression_ratio}",
            constraints=f"{c.classifier.name}+{c.compressor.name}@{cfg.compression_ratio}",
            topic=c.topicer.name,
            abstract_compressed=f"{model.name}@{cfg.compression_ratio}" if model and cfg.abstractive_summaries else None,
            abstract_topic=model.name if model is not None and hasattr(model, "topic") else None,
        )


@dataclass(frozen=True, slots=True)
class Row:
    """One validated input row: the tag (or explicit importance) split off the text."""

    role: str
    text: str
    raw: str
    tag: Importance | None
    id: str | None
    hash: str

    @property
    def utterance_hash(self) -> str:
        """The key of the classifier's verdict: the label depends on who said the text, too."""
        return content_hash(f"{self.role}\n{self.text}")


def prepare(row: Mapping[str, object]) -> Row:
    """Validate a row and split off its tag; an explicit ``importance`` overrides like a tag."""
    role, content = row.get("role"), row.get("content")
    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    if not isinstance(content, str):
        raise InvalidInput("message content must be a string")
    tag, text = parse_tag(content)
    override = row.get("importance")
    if override is not None:
        try:
            tag = override if isinstance(override, Importance) else Importance(str(override).upper())
        except ValueError:
            raise InvalidInput(f"unknown importance {override!r}; expected CRITICAL, RELEVANT or TRIVIAL") from None
    return Row(str(role), text, content, tag, str(row["id"]) if row.get("id") else None, content_hash(text))


class Ingestor:
    """Turns rows into ``Message`` records and vectors through the cache; batches the model calls."""

    def __init__(self, components: Components, config: AFMConfig, cache: ArtifactCache) -> None:
        self.c, self.cfg, self.cache = components, config, cache
        self.keys = ArtifactKeys.of(components, config)

    def embed(self, texts: Sequence[str], hashes: Sequence[str], kind: EmbedKind = "passage") -> list[np.ndarray]:
        """Vectors of history messages (``passage``) or of the current query (``query``), through the cache."""
        key = self.keys.query if kind == "query" else self.keys.passage
        found = [self.cache.get("embedding", key, h) for h in hashes]
        todo = [i for i, v in enumerate(found) if v is None]
        if todo:
            for i, vector in zip(todo, self.c.embedder.embed([texts[i] for i in todo], kind)):
                self.cache.put("embedding", key, hashes[i], vector)
                found[i] = vector
        return found  # type: ignore[return-value]

    def classify(self, rows: Sequence[Row]) -> list[Classification | None]:
        """The classifier's verdict for every untagged row (``None`` for tagged ones), batched."""
        key = self.keys.classifier
        found = [None if r.tag is not None else self.cache.get("importance", key, r.utterance_hash) for r in rows]
        todo = [i for i, r in enumerate(rows) if r.tag is None and found[i] is None]
        for i, verdict in zip(todo, self.c.classifier.classify([Utterance(rows[i].text, rows[i].role) for i in todo])):
            self.cache.put("importance", key, rows[i].utterance_hash, verdict)
            found[i] = verdict
        return found

    def message(self, index: int, row: Row, verdict: Classification | None) -> Message:
        c, cfg, cache, keys, text = self.c, self.cfg, self.cache, self.keys, row.text
        # A background model's result, when one was already made (and stored), wins over the instant form.
        compressed: Compression = (
            cache.peek("compressed", keys.abstract_compressed, row.hash) if keys.abstract_compressed else None
        ) or cache.get_or_compute("compressed", keys.compressed, row.hash, lambda: c.compressor.compress(text, cfg.compression_ratio))
        topic: str = (cache.peek("topic", keys.abstract_topic, row.hash) if keys.abstract_topic else None) or cache.get_or_compute(
            "topic", keys.topic, row.hash, lambda: c.topicer.topic(text)
        )
        placeholder, tokens_placeholder = self.placeholder(index, row.role, topic)
        importance = row.tag if row.tag is not None else verdict.label  # type: ignore[union-attr]
        tokens_full = self.count(text, row.hash)
        constraints = ""
        if importance is Importance.CRITICAL and tokens_full >= cfg.constraint_min_tokens:
            constraints = cache.get_or_compute("constraints", keys.constraints, row.utterance_hash,
                                               lambda: self.constraint_form(text, row.role))
        return Message(
            index=index,
            role=row.role,
            content=text,
            raw=row.raw,
            content_hash=row.hash,
            importance=importance,
            importance_source="tag" if row.tag is not None else verdict.source,  # type: ignore[union-attr]
            tokens_full=tokens_full,
            compressed=compressed,
            tokens_compressed=self.count(compressed.text),
            topic=topic,
            placeholder=placeholder,
            tokens_placeholder=tokens_placeholder,
            id=row.id or uuid.uuid4().hex,
            importance_scores={} if row.tag is not None else dict(verdict.scores),  # type: ignore[union-attr]
            constraints=constraints,
            tokens_constraints=self.count(constraints) if constraints else 0,
            tokens_reference=self.c.counter.count(reference_line(index, row.role)) if importance is Importance.CRITICAL else 0,
        )

    def constraint_form(self, text: str, role: str) -> str:
        """The sentences the classifier calls CRITICAL verbatim, the rest compressed (``text.compression``)."""
        def is_constraint(sentences: Sequence[str]) -> list[bool]:
            verdicts = self.c.classifier.classify([Utterance(s, role) for s in sentences])
            return [v.label is Importance.CRITICAL for v in verdicts]

        return constraint_sentences(text, is_constraint, self.c.compressor, self.cfg.compression_ratio)

    def count(self, text: str, text_hash: str | None = None) -> int:
        return self.cache.get_or_compute(
            "tokens", self.keys.counter, text_hash or content_hash(text), lambda: self.c.counter.count(text)
        )

    def placeholder(self, index: int, role: str, topic: str) -> tuple[str, int]:
        """``[Turn N · role: topic]`` within the token cap: whole key phrases first, then word by word."""
        phrases = [p.strip() for p in topic.split(",") if p.strip()]
        candidates = [", ".join(phrases[:k]) for k in range(len(phrases), 0, -1)]
        words = phrases[0].split() if phrases else []
        candidates += [" ".join(words[:k]) for k in range(len(words) - 1, 0, -1)]
        for label in candidates + [""]:
            text = f"[Turn {index + 1} · {role}: {label}]" if label else f"[Turn {index + 1} · {role}]"
            tokens = self.c.counter.count(text)
            if tokens <= self.cfg.placeholder_max_tokens:
                return text, tokens
        return text, tokens
