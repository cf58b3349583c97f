"""``FocusManager``: one conversation's adaptive memory.

Adding a message computes, once, everything AFM needs from it (``engine.ingest``); ``build_context``
then costs one query embedding plus arithmetic (``engine.build``). When a background model is
configured it runs on the process's background worker (``engine.background``); until its result is
ready the extractive form is used, so building a context never waits on a model.

The engine takes its components; it never builds them. ``afm_local.local_manager(config)`` is the one
call that builds (once per process) and hands over the on-device stack.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from typing import Any

import numpy as np

from ..core.config import AFMConfig, Fill, Overflow, Packing, Render, Spend
from ..core.protocols import Components
from ..core.turns import Turn, as_turn
from ..core.types import Context, Importance, Message
from .background import background_worker
from .build import Request, build_context
from .cache import ArtifactCache, content_hash
from .history import History
from .ingest import Ingestor


class FocusManager:
    """One conversation's adaptive memory over ``components`` (required: ``afm_local.local_manager()`` builds
    the on-device ones); ``components`` and ``cache`` may be shared between managers."""

    def __init__(
        self,
        config: AFMConfig | None = None,
        *,
        components: Components,
        cache: ArtifactCache | None = None,
    ) -> None:
        self.config = config or AFMConfig()
        self.components = components
        self.cache = cache or ArtifactCache()
        self._ingest = Ingestor(components, self.config, self.cache)
        self._history = History(getattr(components.embedder, "dim", 0) or 1, self.config.consolidate_similarity)
        self._lock = threading.RLock()
        self._pending: list[Future[None]] = []

    # ------------------------------------------------------------------ ingestion

    @property
    def messages(self) -> list[Message]:
        with self._lock:
            return list(self._history.messages)

    def add_message(
        self, role: str, content: str | list[dict[str, Any]], importance: Importance | str | None = None
    ) -> Message:
        """Add one message; returns the stored record (id, importance, token counts, attachments).

        ``content`` is text or a list of OpenAI content parts: ``text``, ``image_url`` (a base64 ``data:``
        URL, or an ``http(s)`` URL that is never fetched) and ``file`` (a PDF, text or Markdown file as
        ``file_data``); ``afm_local.file_part(path)`` makes one from a file."""
        return self.add_messages([{"role": role, "content": content, "importance": importance}])[0]

    def add_messages(self, turns: Iterable[Turn | Mapping[str, Any]]) -> list[Message]:
        """Add several messages at once; embeddings and classifications are batched.

        Each is a ``Turn`` or a mapping ``{"role", "content", "importance"?, "id"?}`` (``core.turns.as_turn``);
        a stored ``id`` is kept, so a session restored from the store keeps its ids (and, through the
        cache, recomputes nothing).
        """
        rows = self._ingest.rows([as_turn(turn) for turn in turns])
        vectors = self._ingest.embed([r.text for r in rows], [r.hash for r in rows])
        verdicts = self._ingest.classify(rows)
        stored = []
        with self._lock:
            for row, vector, verdict in zip(rows, vectors, verdicts):
                message = self._ingest.message(len(self._history), row, verdict)
                self._history.append(message, vector)
                stored.append(message)
        for message in stored:
            self._schedule_refinement(message)
        return stored

    # ------------------------------------------------------------------ background model

    def _schedule_refinement(self, message: Message) -> None:
        """Queue the background model's work on ``message``, if it has any (``Ingestor.wants_refinement``)."""
        if not self._ingest.wants_refinement(message):
            return
        future = background_worker().submit(lambda: self._refine(message))
        self._pending = [f for f in self._pending if not f.done()]
        if future is not None:
            self._pending.append(future)

    def _refine(self, message: Message) -> None:
        refined = self._ingest.refine(message)
        if refined is not None:
            with self._lock:  # records are replaced, never mutated: a snapshot being packed stays consistent
                self._history.replace(refined.index, refined)

    def wait_for_compression(self, timeout: float | None = None) -> None:
        """Block until this manager's background jobs have finished (for tools and tests, never packing)."""
        for future in list(self._pending):
            if not future.cancelled():
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

    def __enter__(self) -> FocusManager:
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
        render: Render | None = None,
        packing: Packing | None = None,
        fill: Fill | None = None,
        spend: Spend | None = None,
        overflow: Overflow | None = None,
    ) -> Context:
        """Pack the history for ``current_query`` into ``budget_tokens``, counting everything sent.

        The options override the config's for this call only."""
        req = Request.of(
            current_query,
            budget_tokens,
            system_preamble,
            self.config,
            render=render,
            packing=packing,
            fill=fill,
            spend=spend,
            overflow=overflow,
        )
        with self._lock:  # a snapshot: the background worker may refine a message's forms meanwhile
            snap = self._history.snapshot()
        return build_context(
            snap, self._similarity(snap.vectors, current_query), req, self.components.counter, self.config
        )

    def similarity(self, query: str) -> np.ndarray:
        """Cosine of each history message to ``query``, exactly as ``build_context`` scores it (for
        retrieval baselines and tools)."""
        return self._similarity(self.embeddings(), query)

    def _similarity(self, vectors: np.ndarray, query: str) -> np.ndarray:
        if not len(vectors):
            return np.zeros(0)
        return vectors @ self._ingest.embed([query], [content_hash(query)], "query")[0]

    def embeddings(self) -> np.ndarray:
        """The history's embeddings, one row per message (for similarity baselines and tools)."""
        with self._lock:
            return self._history.vectors().copy()
