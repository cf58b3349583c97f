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
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.config import AFMConfig, Fill, Overflow, Packing, Render, Spend, check_budget
from ..core.errors import BudgetTooSmall, InvalidInput
from ..core.protocols import Components
from ..core.split import Split, loop_focus
from ..core.telemetry import Observer, Operation, OperationName
from ..core.turns import Turn, as_turn
from ..core.types import Context, Message
from ..core.units import group, waiting_calls
from ..core.vocabulary import Importance
from .background import background_worker
from .build import build_context
from .cache import ArtifactCache
from .history import History
from .ingest import Ingestor
from .job import Request


class FocusManager:
    """One conversation's adaptive memory over ``components`` (required: ``afm_local.local_manager()`` builds
    the on-device ones); ``components`` and ``cache`` may be shared between managers."""

    def __init__(
        self,
        config: AFMConfig | None = None,
        *,
        components: Components,
        cache: ArtifactCache | None = None,
        observer: Observer | None = None,
        memory_id: str | None = None,
    ) -> None:
        self.config = config or AFMConfig()
        self.observer, self.memory_id = observer, memory_id  # opt-in reports of each operation (core.telemetry)
        self.components = components
        self.cache = cache or ArtifactCache()
        self._ingest = Ingestor(components, self.config, self.cache)
        self._history = History(getattr(components.embedder, "dim", 0) or 1, self.config.consolidate_similarity)
        self._lock = threading.RLock()
        self._pending: list[Future[None]] = []
        self._open: tuple[Turn, ...] = ()  # a tool-call unit waiting for its results (core.units.group)

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

        Each is a ``Turn`` or a mapping ``{"role", "content", "importance"?, "id"?, "tool_calls"?,
        "tool_call_id"?}`` (``core.turns.as_turn``); a stored ``id`` is kept, so a session restored from the
        store keeps its ids (and, through the cache, recomputes nothing). An assistant message that calls
        tools and the tool messages that answer it become one record (``core.units``), made once the last
        result arrives (until then none is returned, and none is sent).
        """
        start = time.time_ns()
        given = [as_turn(turn) for turn in turns]
        with self._lock:
            entries, still_open = group(given, self._open)
        rows = self._ingest.rows(entries)  # a bad image or file raises here, before the batch changes anything
        with self._lock:
            self._open = still_open
        passages = self._ingest.passages(rows)
        verdicts = self._ingest.classify(rows)
        stored = []
        with self._lock:
            for row, (vector, sentences), verdict in zip(rows, passages, verdicts):
                message = self._ingest.message(len(self._history), row, verdict, sentences)
                self._history.append(message, vector)
                stored.append(message)
        for message in stored:
            self._schedule_refinement(message)
        self._observe("create_memory", start, added=stored)
        return stored

    def prepare(self, turns: Iterable[Turn | Mapping[str, Any]]) -> None:
        """Compute and cache every artifact of ``turns`` without adding them (a store commits a message after
        its artifacts, so restoring it never runs a model); a bad image or file raises here. A later
        ``add_messages`` of the same turns takes them from the cache."""
        with self._lock:
            entries, _ = group([as_turn(t) for t in turns], self._open)
        self._ingest.artifacts(self._ingest.rows(entries))

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
        loop: int = 0,
        focus: str | None = None,
    ) -> Context:
        """Pack the history for ``current_query`` into ``budget_tokens``, counting everything sent.

        The options override the config's for this call only. ``loop``: the newest history entries came after
        the query (an agent's current tool calls and results): packed like the rest and sent after the query,
        the newest at Full when it fits. ``focus``: what the history is scored against (the query by default).
        ``pack_split`` sets both for a whole request."""
        if not isinstance(loop, int) or not 0 <= loop <= len(self._history):
            raise InvalidInput(f"loop must be an entry count between 0 and {len(self._history)}")
        req = Request.of(
            current_query,
            budget_tokens,
            system_preamble,
            self.config,
            loop,
            focus,
            render=render,
            packing=packing,
            fill=fill,
            spend=spend,
            overflow=overflow,
        )
        start = time.time_ns()
        with self._lock:  # a snapshot: the background worker may refine a message's forms meanwhile
            snap = self._history.snapshot()
        try:
            ctx = build_context(snap, self._query_vector(req.focus), req, self.components.counter, self.config)
        except Exception as exc:
            self._observe("search_memory", start, query=current_query, error=exc)
            raise
        self._observe("search_memory", start, query=current_query, context=ctx)
        return ctx

    def pack_split(self, split: Split, budget_tokens: int, beside: int = 0, **options: Any) -> Context:
        """A whole request packed into ``budget_tokens``: its history and its loop added to this (fresh)
        manager, the loop sent after the query and scored against the query and the agent's latest action,
        the query's own images and files checked and counted, and ``beside`` tokens (what the request sends
        beside its messages, such as tool definitions) kept free. ``options`` as ``build_context``'s.
        ``InvalidInput`` for a call left without its result."""
        self.add_messages(split.history)
        self._check_answered("the query")
        before = len(self._history)
        self.add_messages(split.loop)
        self._check_answered("the end of the request")
        attached = self._ingest.attachments.read(split.query_turn.attachments) if split.query_turn else ()
        reserved = sum(a.tokens_full for a in attached if a.kind == "image") + beside
        if reserved >= check_budget(budget_tokens):
            raise BudgetTooSmall(budget_tokens, reserved + 1, "the query's own images and the tool definitions")
        loop = len(self._history) - before
        focus = loop_focus(split.query, split.loop) if loop else None
        try:
            ctx = self.build_context(
                split.query, budget_tokens - reserved, split.preamble, loop=loop, focus=focus, **options
            )
        except BudgetTooSmall as exc:
            raise BudgetTooSmall(budget_tokens, exc.minimum + reserved, exc.what) from None
        return replace(ctx, tokens_used=ctx.tokens_used + reserved, budget_tokens=budget_tokens)

    def _check_answered(self, where: str) -> None:
        """``InvalidInput`` when a tool call is still waiting for its result at ``where``."""
        with self._lock:
            open_turns = self._open
        if open_turns:
            waiting = waiting_calls(open_turns)[0]
            raise InvalidInput(f"tool call {waiting[:64]!r} has no tool result before {where}")

    def _observe(self, name: OperationName, start: int, **found: Any) -> None:
        """Hand the observer, if there is one, the record of an operation that began at ``start``."""
        if self.observer is not None:
            self.observer.record(Operation(name, self.memory_id, start, time.time_ns(), len(self._history), **found))

    def similarity(self, query: str) -> np.ndarray:
        """Cosine of each history message to ``query``, as ``build_context`` reads it (for retrieval
        baselines and tools)."""
        vectors = self.embeddings()
        return vectors @ self._query_vector(query) if len(vectors) else np.zeros(0)

    def _query_vector(self, query: str) -> np.ndarray:
        return self._ingest.query_vector(query)

    def embeddings(self) -> np.ndarray:
        """The history's embeddings, one row per message (for similarity baselines and tools)."""
        with self._lock:
            return self._history.vectors().copy()
