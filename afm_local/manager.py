"""``FocusManager``: the AFM loop over a conversation, with every per-message artifact cached.

Adding a message computes, once, everything AFM needs from it: importance (tag, model, rules), the
embedding, the extractive compressed form, a placeholder and the token counts. ``build_context`` then
costs one query embedding plus arithmetic: score, choose intended forms, pack into the budget and
render. When an abstractive compressor is configured it runs in a background worker; until its
result is ready the extractive form is used, so building a context never waits on a model.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterable, Mapping, Sequence

import numpy as np

from .cache import ArtifactCache, content_hash
from .components import Components, local_components
from .config import AFMConfig
from .packing import BudgetTooSmall, PackItem, cap_placeholders, minimum_history_cost, pack
from .protocols import Topicer
from .lexicon import detect_language
from .render import Packed, render_chat, render_structured, structured_skeleton
from .scoring import intended_fidelity, messages_ago, recency_weight, score_messages
from .tags import parse_tag
from .types import ROLES, Context, ContextItem, Fidelity, Importance, Message

STRUCTURED_LINE_OVERHEAD = 2  # a bullet and a newline per item in the structured memory

# One background queue per process: the GGUF model is shared and runs one job at a time anyway, so
# many sessions share one worker thread instead of each holding its own.
_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="afm-compress")


class FocusManager:
    """One conversation's adaptive memory.

    Components default to the local models that ``config`` names, the background GGUF compressor
    included (``local_components(config, abstractive=True)``); pass ``components`` to share
    them between managers, or to inject others in tests and benchmarks. ``cache`` is shared the same
    way, and may be backed by the SQLite store.
    """

    def __init__(
        self,
        config: AFMConfig | None = None,
        *,
        components: Components | None = None,
        cache: ArtifactCache | None = None,
    ) -> None:
        self.config = config or AFMConfig()
        self.components = components or local_components(self.config, abstractive=True)
        self.cache = cache or ArtifactCache()
        self._messages: list[Message] = []
        self._vectors: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
        self._lock = threading.RLock()
        self._pending: list[Future[None]] = []

    # ------------------------------------------------------------------ ingestion

    @property
    def messages(self) -> list[Message]:
        with self._lock:
            return list(self._messages)

    def add_message(self, role: str, content: str, importance: Importance | str | None = None) -> Message:
        """Add one message; returns the stored record (id, importance, token counts)."""
        return self.add_messages([{"role": role, "content": content, "importance": importance}])[0]

    def add_messages(self, rows: Iterable[Mapping[str, object]]) -> list[Message]:
        """Add several messages at once; embeddings and classifications are batched.

        Each row is ``{"role", "content", "importance"?, "id"?}``; a stored ``id`` is kept, so a
        session restored from the store keeps its ids (and, through the cache, recomputes nothing).
        """
        rows = list(rows)
        prepared = [self._prepare(row) for row in rows]
        c = self.components
        hashes = [content_hash(text) for _, text, _, _ in prepared]
        vectors = self._embed_many([text for _, text, _, _ in prepared], hashes)
        untagged = [i for i, (_, _, tag, _) in enumerate(prepared) if tag is None]
        verdicts: dict[int, object] = {}
        missing = [i for i in untagged if self.cache.get("importance", c.classifier.name, hashes[i]) is None]
        for i, verdict in zip(missing, c.classifier.classify([prepared[i][1] for i in missing])):
            self.cache.put("importance", c.classifier.name, hashes[i], verdict)
        for i in untagged:
            verdicts[i] = self.cache.get("importance", c.classifier.name, hashes[i])
        stored = []
        with self._lock:
            for i, (role, text, tag, raw) in enumerate(prepared):
                verdict = verdicts.get(i)
                importance = tag if tag is not None else verdict.label  # type: ignore[union-attr]
                message = self._build_message(len(self._messages), role, text, raw, hashes[i], importance, tag, verdict)
                message.id = str(rows[i].get("id") or message.id)
                self._messages.append(message)
                self._vectors.append(vectors[i])
                self._matrix = None
                stored.append(message)
        for message in stored:
            self._schedule_abstractive(message)
        return stored

    def _prepare(self, row: Mapping[str, object]) -> tuple[str, str, Importance | None, str]:
        """Validate a row and split off its tag; an explicit ``importance`` overrides like a tag."""
        role = row.get("role")
        content = row.get("content")
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise ValueError("message content must be a string")
        tag, text = parse_tag(content)
        override = row.get("importance")
        if override is not None:
            try:
                tag = override if isinstance(override, Importance) else Importance(str(override).upper())
            except ValueError:
                raise ValueError(f"unknown importance {override!r}; expected CRITICAL, RELEVANT or TRIVIAL") from None
        return str(role), text, tag, content

    def _embed_many(self, texts: Sequence[str], hashes: Sequence[str]) -> list[np.ndarray]:
        name = self.components.embedder.name
        found = [self.cache.get("embedding", name, h) for h in hashes]
        todo = [i for i, v in enumerate(found) if v is None]
        if todo:
            fresh = self.components.embedder.embed([texts[i] for i in todo])
            for i, vector in zip(todo, fresh):
                self.cache.put("embedding", name, hashes[i], vector)
                found[i] = vector
        return found  # type: ignore[return-value]

    def _build_message(
        self,
        index: int,
        role: str,
        text: str,
        raw: str,
        text_hash: str,
        importance: Importance,
        tag: Importance | None,
        verdict: object,
    ) -> Message:
        c, cfg, cache = self.components, self.config, self.cache
        counter = c.counter.name
        ratio_key = f"{c.compressor.name}@{cfg.compression_ratio}"
        abstract_key = (
            f"{c.abstractive.name}@{cfg.compression_ratio}" if c.abstractive and cfg.abstractive_summaries else None
        )
        # A background model's result, when one was already made (and stored), wins over the instant form.
        compressed = (cache.peek("compressed", abstract_key, text_hash) if abstract_key else None) or cache.get_or_compute(
            "compressed", ratio_key, text_hash, lambda: c.compressor.compress(text, cfg.compression_ratio)
        )
        topic = (cache.peek("topic", c.abstractive.name, text_hash) if c.abstractive else None) or cache.get_or_compute(
            "topic", c.topicer.name, text_hash, lambda: c.topicer.topic(text)
        )
        tokens_full = cache.get_or_compute("tokens", counter, text_hash, lambda: c.counter.count(text))
        tokens_compressed = cache.get_or_compute(
            "tokens", counter, content_hash(compressed.text), lambda: c.counter.count(compressed.text)
        )
        placeholder, tokens_placeholder = self._placeholder(index, role, topic)
        return Message(
            index=index,
            role=role,
            content=text,
            raw=raw,
            content_hash=text_hash,
            importance=importance,
            importance_source="tag" if tag is not None else verdict.source,  # type: ignore[attr-defined]
            tokens_full=tokens_full,
            compressed=compressed,
            tokens_compressed=tokens_compressed,
            topic=topic,
            placeholder=placeholder,
            tokens_placeholder=tokens_placeholder,
            id=uuid.uuid4().hex,
            importance_scores={} if tag is not None else dict(verdict.scores),  # type: ignore[attr-defined]
        )

    def _placeholder(self, index: int, role: str, topic: str) -> tuple[str, int]:
        """``[Turn N · role: topic]`` within the token cap: whole key phrases first, then word by word."""
        phrases = [p.strip() for p in topic.split(",") if p.strip()]
        candidates = [", ".join(phrases[:k]) for k in range(len(phrases), 0, -1)]
        words = phrases[0].split() if phrases else []
        candidates += [" ".join(words[:k]) for k in range(len(words) - 1, 0, -1)]
        for label in candidates + [""]:
            text = f"[Turn {index + 1} · {role}: {label}]" if label else f"[Turn {index + 1} · {role}]"
            tokens = self.components.counter.count(text)
            if tokens <= self.config.placeholder_max_tokens:
                return text, tokens
        return text, tokens

    # ------------------------------------------------------------------ background compression

    def _schedule_abstractive(self, message: Message) -> None:
        abstractive = self.components.abstractive
        if abstractive is None or message.tokens_full <= 2 * self.config.placeholder_max_tokens:
            return
        key = f"{abstractive.name}@{self.config.compression_ratio}"
        summary_done = not self.config.abstractive_summaries or self.cache.peek("compressed", key, message.content_hash)
        topic_done = not isinstance(abstractive, Topicer) or self.cache.peek("topic", abstractive.name, message.content_hash)
        if summary_done and topic_done:
            return
        self._pending = [f for f in self._pending if not f.done()]
        self._pending.append(_BACKGROUND.submit(self._run_abstractive, message, key))

    def _run_abstractive(self, message: Message, key: str) -> None:
        """Name the message's topic with the model and, when configured, refine its compressed form."""
        abstractive = self.components.abstractive
        assert abstractive is not None
        result = None
        if self.config.abstractive_summaries:
            result = self.cache.get_or_compute(
                "compressed", key, message.content_hash,
                lambda: abstractive.compress(message.content, self.config.compression_ratio),
            )
        topic = None
        if isinstance(abstractive, Topicer):
            topic = self.cache.get_or_compute(
                "topic", abstractive.name, message.content_hash, lambda: abstractive.topic(message.content)
            )
        tokens = self.components.counter.count(result.text) if result else message.tokens_full
        with self._lock:
            if result is not None and tokens < message.tokens_full:
                message.compressed = result
                message.tokens_compressed = tokens
            if topic:
                message.topic = topic
                message.placeholder, message.tokens_placeholder = self._placeholder(message.index, message.role, topic)

    def wait_for_compression(self, timeout: float | None = None) -> None:
        """Block until background compression has finished (for tools and tests, never for packing)."""
        for future in list(self._pending):
            future.result(timeout=timeout)
        self._pending = [f for f in self._pending if not f.done()]

    @property
    def compression_pending(self) -> int:
        """Background jobs of this manager not finished yet."""
        return sum(not f.done() for f in self._pending)

    def close(self) -> None:
        """Cancel this manager's queued background jobs (one already running finishes)."""
        for future in self._pending:
            future.cancel()
        self._pending = []

    def __enter__(self) -> "FocusManager":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ context building

    def build_context(
        self,
        current_query: str,
        budget_tokens: int,
        system_preamble: str | None = None,
        *,
        render: str | None = None,
        packing: str | None = None,
        fill: str | None = None,
    ) -> Context:
        """Pack the history for ``current_query`` into ``budget_tokens``, counting everything sent."""
        if not isinstance(budget_tokens, int) or isinstance(budget_tokens, bool) or budget_tokens <= 0:
            raise ValueError(f"budget_tokens must be a positive integer, got {budget_tokens!r}")
        cfg = self.config
        render = render or cfg.render
        packing = packing or cfg.packing
        fill = fill or cfg.fill
        if render not in ("chat", "structured"):
            raise ValueError(f"unknown render {render!r}; expected chat or structured")
        with self._lock:
            messages = list(self._messages)
            forms = [(m.compressed.text, m.tokens_compressed) for m in messages]
            matrix = self._stacked()
        c = self.components
        query_vec = self._embed_many([current_query], [content_hash(current_query)])[0]
        similarity = matrix @ query_vec if len(messages) else np.zeros(0)
        recency = recency_weight(messages_ago(len(messages)), cfg.half_life)
        importance = [m.importance for m in messages]
        scores = score_messages(importance, similarity, recency, cfg)
        intended = [intended_fidelity(float(s), imp, cfg) for s, imp in zip(scores, importance)]

        language = detect_language(*(m.content for m in messages[-50:]), current_query)
        per_item = cfg.per_message_overhead if render == "chat" else STRUCTURED_LINE_OVERHEAD
        items = [
            PackItem(m.importance, float(s), f, self._costs(m, ct, per_item))
            for m, s, f, (_, ct) in zip(messages, scores, intended, forms)
        ]
        if cfg.max_placeholders is not None:
            items = cap_placeholders(items, cfg.max_placeholders)
        query_cost = c.counter.count(current_query) + cfg.per_message_overhead
        if render == "chat":
            fixed = query_cost + cfg.reply_overhead
            if system_preamble:
                fixed += c.counter.count(system_preamble) + cfg.per_message_overhead
        else:
            skeleton = structured_skeleton(system_preamble, language)
            fixed = query_cost + cfg.reply_overhead + c.counter.count(skeleton) + cfg.per_message_overhead
        minimum = fixed + minimum_history_cost(items)
        if minimum > budget_tokens:
            raise BudgetTooSmall(budget_tokens, minimum)

        available = budget_tokens - fixed
        for _ in range(4):  # the structured text is recounted whole; tighten if joins cost more
            fidelities = pack(items, available, packing=packing, fill=fill)
            packed = [
                Packed(m.role, m.importance, fid, _form_text(m, fid, ctext, ct))
                for m, fid, (ctext, ct) in zip(messages, fidelities, forms)
            ]
            if render == "chat":  # every sent text is a form whose count is cached: the sum is exact
                sent = render_chat(system_preamble, packed, current_query)
                used = fixed + sum(it.costs[f] for it, f in zip(items, fidelities) if f is not Fidelity.DROPPED)
            else:
                sent = render_structured(system_preamble, packed, current_query, language)
                used = sum(c.counter.count(m["content"]) + cfg.per_message_overhead for m in sent) + cfg.reply_overhead
            if used <= budget_tokens:
                break
            available -= used - budget_tokens
            if available < minimum_history_cost(items):
                raise BudgetTooSmall(budget_tokens, minimum + used - budget_tokens)
        else:
            raise BudgetTooSmall(budget_tokens, used)

        context_items = [
            ContextItem(
                index=m.index,
                role=m.role,
                importance=m.importance,
                score=float(s),
                similarity=float(sim),
                recency=float(w),
                intended=f,
                fidelity=fid,
                tokens=0 if fid is Fidelity.DROPPED else it.costs[fid] - per_item,
                text=p.text,
            )
            for m, s, sim, w, f, fid, it, p in zip(messages, scores, similarity, recency, intended, fidelities, items, packed)
        ]
        return Context(sent, context_items, used, budget_tokens, render, packing, language)

    def _costs(self, m: Message, compressed_tokens: int, per_item: int) -> dict[Fidelity, int]:
        costs = {Fidelity.FULL: m.tokens_full + per_item}
        if self.config.use_compression:
            costs[Fidelity.COMPRESSED] = min(compressed_tokens, m.tokens_full) + per_item
        if self.config.use_placeholders:
            costs[Fidelity.PLACEHOLDER] = m.tokens_placeholder + per_item
        return costs

    def embeddings(self) -> np.ndarray:
        """The history's embeddings, one row per message (for similarity baselines and tools)."""
        with self._lock:
            return self._stacked().copy()

    def _stacked(self) -> np.ndarray:
        if self._matrix is None or len(self._matrix) != len(self._vectors):
            dim = getattr(self.components.embedder, "dim", 0)
            self._matrix = np.vstack(self._vectors) if self._vectors else np.zeros((0, dim), dtype=np.float32)
        return self._matrix


def _form_text(message: Message, fidelity: Fidelity, compressed: str, compressed_tokens: int) -> str:
    if fidelity is Fidelity.FULL:
        return message.content
    if fidelity is Fidelity.COMPRESSED:
        return compressed if compressed_tokens < message.tokens_full else message.content
    if fidelity is Fidelity.PLACEHOLDER:
        return message.placeholder
    return ""
