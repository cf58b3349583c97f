"""Ingest: one message in, every artifact AFM needs from it out, each computed once; and its later
refinement by the background model.

The cache's key scheme lives here and only here (``ArtifactKeys``): an artifact is keyed by the
component that made it (and, for compressed texts, the ratio) and the sha256 of the text, so it is
shared by every session and survives restarts when the cache has a persistent backend.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..core.accounting import unit_tokens
from ..core.config import AFMConfig
from ..core.forms import attachment_block
from ..core.parts import Attached
from ..core.protocols import Components, Topicer
from ..core.render import placeholder, reference_line
from ..core.tags import parse_tag
from ..core.turns import Turn
from ..core.types import Classification, Compression, Message, Sentences, Utterance
from ..core.units import Entry, ToolUnit, UnitForms, results_text, tools_label, transcript
from ..core.vocabulary import Importance, Role
from ..text.extractive import constraint_sentences
from ..text.lexicon import sentence_spans
from ..text.tool_results import PROSE_MAX_CHARS, compress_result, unit_label
from .attachments import AttachmentReader, attachment_topic
from .cache import ArtifactCache, content_hash

WORTH_A_SUMMARY = 2  # the background model reads messages longer than this many placeholders
UNIT_LINE_EXTRA = 10  # a tool-call unit's line may run this much longer: it names the tools, an argument, a size
UNIT_READ_CHARS = 1200  # of a tool-call unit's transcript, read by the encoder


@dataclass(frozen=True, slots=True)
class ArtifactKeys:
    """The component part of every cache key, derived once from the components and the config."""

    counter: str
    passage: str  # embedder, for history messages
    sentences: str  # embedder + counter: a message's sentences, their vectors and token counts
    query: str  # embedder, for the current query (an asymmetric model gives it another vector)
    classifier: str
    compressed: str  # extractive compressor @ ratio
    constraints: str  # classifier + extractive compressor @ ratio: a long constraint's constraint sentences
    topic: str
    tool_result: str  # extractive compressor, else a head @ ratio: a tool result's compressed form
    abstract_compressed: str | None  # background model @ ratio, when it proposes summaries
    abstract_topic: str | None  # background model, when it names topics

    @classmethod
    def of(cls, components: Components, config: AFMConfig) -> ArtifactKeys:
        model, ratio = components.abstractive, config.compression_ratio
        return cls(
            counter=components.counter.name,
            passage=components.embedder.name,
            sentences=f"{components.embedder.name}+{components.counter.name}",
            query=f"{components.embedder.name}+query",
            classifier=components.classifier.name,
            compressed=f"{components.compressor.name}@{ratio}",
            constraints=f"{components.classifier.name}+{components.compressor.name}@{ratio}",
            topic=components.topicer.name,
            tool_result=f"{components.compressor.name}+head@{ratio}",
            abstract_compressed=f"{model.name}@{ratio}" if model and config.abstractive_summaries else None,
            abstract_topic=model.name if model is not None and hasattr(model, "topic") else None,
        )


@dataclass(frozen=True, slots=True)
class Row:
    """A history entry ready for ingest: the tag (or explicit importance) split off the text, the text
    hashed. A tool-call unit reads as its transcript, said by the assistant. With attachments, ``text`` is
    the caption followed by each attachment's block (its name and its text, ``core.forms.attachment_block``):
    what is embedded, classified, compressed and sent."""

    role: Role
    text: str
    raw: str
    tag: Importance | None
    id: str | None
    hash: str
    unit: ToolUnit | None = None
    attached: tuple[Attached, ...] = ()
    caption: str = ""

    @classmethod
    def of(cls, turn: Entry, attached: tuple[Attached, ...] = ()) -> Row:
        """Split off a leading tag; an explicit importance overrides it."""
        if isinstance(turn, ToolUnit):
            text = transcript(turn)
            return cls("assistant", text, text, turn.call.importance, turn.call.id, content_hash(text), turn)
        tag, caption = parse_tag(turn.content)
        importance = turn.importance if turn.importance is not None else tag
        blocks = [attachment_block(n, a) for n, a in enumerate(attached, 1)]
        text = "\n\n".join([caption.strip(), *blocks]).strip() if blocks else caption
        return cls(turn.role, text, turn.content, importance, turn.id, content_hash(text), None, attached, caption)

    @property
    def utterance_hash(self) -> str:
        """The key of the classifier's verdict: the label depends on who said the text, too."""
        return content_hash(f"{self.role}\n{self.read}")

    @property
    def read(self) -> str:
        """What the encoder reads (to embed and classify): a tool-call unit's calls and the head of its results
        (a file or a log is known by its name and first lines; reading all of it would cost a second a unit
        and say no more), any other message whole."""
        return self.text[:UNIT_READ_CHARS] if self.unit is not None else self.text


@dataclass(frozen=True, slots=True)
class Derived:
    """What ingest derives from a message's text, wherever the message stands in a history."""

    verdict: Classification
    tokens_full: int
    compressed: Compression
    tokens_compressed: int
    topic: str
    constraints: str  # a long CRITICAL message's constraint sentences verbatim, the rest compressed; or ""
    tokens_constraints: int
    unit: UnitForms | None = None


class _Counting:
    """The ingest's cached token counts, as a ``TokenCounter``."""

    def __init__(self, ingest: Ingestor) -> None:
        self.name, self.ingest = ingest.keys.counter, ingest

    def count(self, text: str) -> int:
        return self.ingest.count(text)


class Ingestor:
    """Turns rows into ``Message`` records and vectors through the cache; batches the model calls."""

    def __init__(self, components: Components, config: AFMConfig, cache: ArtifactCache) -> None:
        self.components, self.config, self.cache = components, config, cache
        self.keys = ArtifactKeys.of(components, config)
        self.attachments = AttachmentReader(components.media, config, cache, components.counter.count)

    def rows(self, entries: Sequence[Entry]) -> list[Row]:
        """Rows of history entries, a turn's attachments read (through the cache) and their text joined to its
        caption. Bad attachments raise here, before any artifact of the entries is computed."""
        return [Row.of(e, self.attachments.read(e.attachments) if isinstance(e, Turn) else ()) for e in entries]

    def query_vector(self, query: str) -> np.ndarray:
        """The current query's vector (an asymmetric embedder gives a query its own), through the cache."""
        key, text_hash = self.keys.query, content_hash(query)
        return self.cache.embeddings.get_or_compute(
            key, text_hash, lambda: self.components.embedder.embed([query], "query")[0]
        )

    def passages(self, rows: Sequence[Row]) -> list[tuple[np.ndarray, Sentences]]:
        """Each history message's vector and its sentences (sentences with their vectors, from the same encoder
        pass, and their token counts), through the cache; one batched model call for what is missing."""
        keys, cache = self.keys, self.cache
        found = [
            (cache.embeddings.get(keys.passage, r.hash), cache.sentences.get(keys.sentences, r.hash)) for r in rows
        ]
        todo = [i for i, (vector, sentences) in enumerate(found) if vector is None or sentences is None]
        if todo:
            spans = [tuple(sentence_spans(rows[i].read)) or ((0, len(rows[i].read)),) for i in todo]
            vectors, sentence_vectors = self.components.embedder.embed_sentences([rows[i].read for i in todo], spans)
            for k, i in enumerate(todo):
                text = rows[i].read
                sentences = Sentences(spans[k], tuple(self.count(text[a:b]) for a, b in spans[k]), sentence_vectors[k])
                cache.embeddings.put(keys.passage, rows[i].hash, vectors[k])
                cache.sentences.put(keys.sentences, rows[i].hash, sentences)
                found[i] = (vectors[k], sentences)
        return cast(list[tuple[np.ndarray, Sentences]], found)

    def classify(self, rows: Sequence[Row]) -> list[Classification]:
        """Every row's verdict: the user's tag for a tagged row, else the classifier's (batched, cached)."""
        key, cached = self.keys.classifier, self.cache.importance
        found = [
            Classification(r.tag, {}, "tag") if r.tag is not None else cached.get(key, r.utterance_hash) for r in rows
        ]
        todo = [i for i, v in enumerate(found) if v is None]
        utterances = [Utterance(rows[i].read, rows[i].role) for i in todo]
        for i, verdict in zip(todo, self.components.classifier.classify(utterances)):
            cached.put(key, rows[i].utterance_hash, verdict)
            found[i] = verdict
        return cast(list[Classification], found)

    def artifacts(self, rows: Sequence[Row]) -> None:
        """Compute (and store, when the cache has a backend) every artifact of ``rows`` that model work
        makes, so that taking them into a history later runs no model (the server, before a row commits)."""
        self.passages(rows)  # leaves the states the classifier reads
        for row, verdict in zip(rows, self.classify(rows)):
            self.derive(row, verdict)

    def derive(self, row: Row, verdict: Classification) -> Derived:
        """The texts and token counts of a message, through the cache. A background model's result, when
        one was already made (and stored), wins over the instant extractive one."""
        if row.unit is not None:
            return self.derive_unit(row.unit, verdict)
        keys, cache, text = self.keys, self.cache, row.text
        ratio = self.config.compression_ratio
        compressed = cache.compressed.peek(keys.abstract_compressed, row.hash) if keys.abstract_compressed else None
        compressed = compressed or cache.compressed.get_or_compute(
            keys.compressed, row.hash, lambda: self.components.compressor.compress(text, ratio)
        )
        topic = cache.topics.peek(keys.abstract_topic, row.hash) if keys.abstract_topic and not row.attached else None
        topic = topic or cache.topics.get_or_compute(keys.topic, row.hash, lambda: self.topic(row))
        tokens_full = self.count(text, row.hash)
        constraints = ""
        if verdict.label is Importance.CRITICAL and tokens_full >= self.config.constraint_min_tokens:
            constraints = cache.constraints.get_or_compute(
                keys.constraints, row.utterance_hash, lambda: self.constraint_sentences(text, row.role)
            )
        return Derived(
            verdict,
            tokens_full,
            compressed,
            self.count(compressed.text),
            topic,
            constraints,
            self.count(constraints) if constraints else 0,
        )

    def topic(self, row: Row) -> str:
        """What a placeholder names: the topicer's key phrases; with attachments, the caption's first."""
        if row.attached:
            return attachment_topic(row.caption, row.attached, self.components.topicer)
        return self.components.topicer.topic(row.text)

    def derive_unit(self, unit: ToolUnit, verdict: Classification) -> Derived:
        """A tool-call unit's forms: whole; its texts compressed (``text.tool_results``; the unit whole when
        that saves nothing); the gist of its results for the placeholder. Token counts are its messages'
        chat costs (``core.accounting.unit_tokens``), so a chat context stays exact. Never a constraint form."""
        cache, ratio, counting = self.cache, self.config.compression_ratio, _Counting(self)
        compressor = self.components.compressor

        def shorter(text: str) -> str:
            return cache.compressed.get_or_compute(
                self.keys.tool_result,
                content_hash(text),
                lambda: Compression(compress_result(text, compressor, counting, ratio), "tool-result"),
            ).text

        small = unit.with_texts(
            shorter(unit.call.content) if unit.call.content else "", [shorter(r.content) for r in unit.results]
        )
        tokens_full, tokens_small = (
            unit_tokens(counting, unit.turns, self.config),
            unit_tokens(counting, small.turns, self.config),
        )
        if tokens_small >= tokens_full:
            small, tokens_small = unit, tokens_full
        gist = results_text(unit)
        topic = cache.topics.get_or_compute(
            self.keys.topic, content_hash(gist), lambda: self.components.topicer.topic(gist[:PROSE_MAX_CHARS])
        )
        topic = ", ".join(p for p in (unit_label(unit), topic) if p)
        compressed = Compression(transcript(small), "tool-unit")
        return Derived(verdict, tokens_full, compressed, tokens_small, topic, "", 0, UnitForms(unit, small))

    def message(self, index: int, row: Row, verdict: Classification, sentences: Sentences | None = None) -> Message:
        """The record of ``row`` as message ``index`` of a history (``sentences``: its sentences, from
        ``passages``; a tool-call unit has none: its compressed form is its own, never an excerpt). Its Full
        and Compressed token counts include its images: the originals, and the thumbnails."""
        d = self.derive(row, verdict)
        if row.unit is not None:  # a cleared tool result names what was there: its tools, argument and size
            line, tokens_placeholder = self.placeholder(index, tools_label(row.unit), d.topic, UNIT_LINE_EXTRA)
        else:
            line, tokens_placeholder = self.placeholder(index, row.role, d.topic)
        critical = d.verdict.label is Importance.CRITICAL
        images_full = sum(a.tokens_full for a in row.attached)
        images_compressed = sum(a.tokens_thumbnail for a in row.attached)
        return Message(
            index=index,
            role=row.role,
            content=row.text,
            raw=row.raw,
            content_hash=row.hash,
            importance=d.verdict.label,
            importance_source=d.verdict.source,
            tokens_full=d.tokens_full + images_full,
            compressed=d.compressed,
            tokens_compressed=d.tokens_compressed + images_compressed,
            topic=d.topic,
            placeholder=line,
            tokens_placeholder=tokens_placeholder,
            id=row.id or uuid.uuid4().hex,
            importance_scores=dict(d.verdict.scores),
            constraints=d.constraints,
            tokens_constraints=d.tokens_constraints,
            tokens_reference=self.components.counter.count(reference_line(index, row.role)) if critical else 0,
            unit=d.unit,
            sentences=None if row.unit is not None else sentences,
            attachments=row.attached,
        )

    def constraint_sentences(self, text: str, role: str) -> str:
        """The sentences the classifier calls CRITICAL verbatim, the rest compressed (``text.extractive``)."""

        def is_constraint(sentences: Sequence[str]) -> list[bool]:
            verdicts = self.components.classifier.classify([Utterance(s, role) for s in sentences])
            return [v.label is Importance.CRITICAL for v in verdicts]

        return constraint_sentences(text, is_constraint, self.components.compressor, self.config.compression_ratio)

    def count(self, text: str, text_hash: str | None = None) -> int:
        return self.cache.tokens.get_or_compute(
            self.keys.counter, text_hash or content_hash(text), lambda: self.components.counter.count(text)
        )

    def placeholder(self, index: int, role: str, topic: str, extra: int = 0) -> tuple[str, int]:
        return placeholder(index, role, topic, self.components.counter, self.config.placeholder_max_tokens + extra)

    # ------------------------------------------------------------------ the background model

    def wants_refinement(self, message: Message) -> bool:
        """Whether the background model has work on ``message``: one long enough to be worth a summary,
        whose summary or topic it has not made yet."""
        keys, model = self.keys, self.components.abstractive
        if model is None or message.unit is not None:  # a unit's forms are its API messages: not summarised
            return False
        if message.tokens_full <= WORTH_A_SUMMARY * self.config.placeholder_max_tokens:
            return False
        if message.attachments:  # its forms carry images: the extractive ones stay
            return False
        summary_done = keys.abstract_compressed is None or bool(
            self.cache.compressed.peek(keys.abstract_compressed, message.content_hash)
        )
        topic_done = keys.abstract_topic is None or bool(
            self.cache.topics.peek(keys.abstract_topic, message.content_hash)
        )
        return not (summary_done and topic_done)

    def refine(self, message: Message) -> Message | None:
        """The background model's topic for ``message`` and, when configured, its (guarded) summary: the
        refined record, or ``None`` when nothing changed. Slow: runs on the background worker."""
        model, keys, cache = self.components.abstractive, self.keys, self.cache
        if model is None:
            return None
        summary = None
        if keys.abstract_compressed is not None:
            summary = cache.compressed.get_or_compute(
                keys.abstract_compressed,
                message.content_hash,
                lambda: model.compress(message.content, self.config.compression_ratio),
            )
        topic = None
        if keys.abstract_topic is not None and isinstance(model, Topicer):
            topic = cache.topics.get_or_compute(
                keys.abstract_topic, message.content_hash, lambda: model.topic(message.content)
            )
        refined = message
        tokens = self.count(summary.text) if summary else message.tokens_full
        if summary is not None and tokens < message.tokens_full:
            refined = dataclasses.replace(refined, compressed=summary, tokens_compressed=tokens)
        if topic:
            line, tokens_placeholder = self.placeholder(message.index, message.role, topic)
            refined = dataclasses.replace(refined, topic=topic, placeholder=line, tokens_placeholder=tokens_placeholder)
        return None if refined is message else refined
