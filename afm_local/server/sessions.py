"""The sessions a server process has loaded: each a copy of a prefix of the store, caught up before use.

The store is the truth, and a loaded session is a copy of a prefix of it. Several workers (processes,
hosts) may append to one session, so each use of a session first catches up: the rows from the
position the copy has reached on are read and added, their artifacts coming from the shared cache
(no model runs). An append computes and stores its artifacts first (``FocusManager.prepare``), then
commits its row (the store gives it the next position; the message id is minted here, once), then
catches up, which brings in its own row and any other worker's rows before it. A message appended
through one worker is therefore in the next context any worker builds. A session is evicted (least
recently used) past ``max_loaded``; the artifact caches are keyed by content hash, so they stay
correct whatever any worker does, and are bounded LRUs.

Tenants: a loaded session is found by (tenant, id), and reaches the store only through its tenant's
``TenantStore``. Each session has its own artifact cache over its own rows (``SessionArtifacts``): nothing
derived from one tenant's text is ever looked up for another (docs/server.md). Erasing a session cancels
its queued background jobs, forgets what is loaded, and lets the store scrub the bytes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import UnknownSession
from ..core.tags import parse_tag
from ..core.turns import as_turn
from ..core.types import Message
from ..engine import ArtifactCache, FocusManager
from .schemas import MessageOut
from .store import TenantStore, valid_session_id

SESSION_CACHE_ENTRIES = 512  # a loaded session's history holds its artifacts; the cache serves ingest
Runner = Callable[..., Awaitable[Any]]  # AppState.run: model and store work in the bounded pool
ManagerOf = Callable[[ArtifactCache, str], FocusManager]


class SessionArtifacts:
    """``engine.cache.CacheBackend`` over one session's artifact rows (``TenantStore``)."""

    def __init__(self, store: TenantStore, session_id: str) -> None:
        self.store, self.session_id = store, session_id

    def load_artifact(self, kind: str, key: str) -> bytes | None:
        return self.store.load_artifact(self.session_id, kind, key)

    def save_artifact(self, kind: str, key: str, data: bytes) -> None:
        self.store.save_artifact(self.session_id, kind, key, data)


@dataclass
class SessionState:
    cache: ArtifactCache
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    fm: FocusManager | None = None


class Sessions:
    """The loaded sessions of every tenant, by (tenant, id); ``retired`` keeps the cache counts of those let go."""

    def __init__(self, run: Runner, manager_of: ManagerOf, max_loaded: int, on_append: Callable[[], None]) -> None:
        self.run, self.manager_of, self.max_loaded, self.on_append = run, manager_of, max_loaded, on_append
        self.loaded: OrderedDict[tuple[str, str], SessionState] = OrderedDict()
        self.retired = [0, 0]  # hits and misses of the caches of sessions let go

    async def session(self, store: TenantStore, session_id: str) -> SessionState:
        """The tenant's loaded session, caught up with the store (restored on first use: every artifact
        from its rows). ``UnknownSession`` when the tenant has no such session, whoever else may."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        key = (store.tenant, session_id)
        state = self.loaded.get(key)
        if state is None:
            cache = ArtifactCache(SessionArtifacts(store, session_id), max_entries=SESSION_CACHE_ENTRIES)
            state = self.loaded[key] = SessionState(cache)
        async with state.lock:
            await self.catch_up(store, session_id, state)
        if self.loaded.get(key) is state:
            self.loaded.move_to_end(key)
        self._evict()
        return state

    async def manager(self, store: TenantStore, session_id: str) -> FocusManager:
        """The tenant's session's manager, caught up (for packing and reading)."""
        session = await self.session(store, session_id)
        assert session.fm is not None
        return session.fm

    async def catch_up(self, store: TenantStore, session_id: str, state: SessionState) -> None:
        """Add the rows any worker committed since ``state`` last looked; the caller holds ``state.lock``."""
        try:
            await self.run(self._catch_up, store, session_id, state)
        except UnknownSession:
            self.forget(store.tenant, session_id, state)
            raise

    def _catch_up(self, store: TenantStore, session_id: str, state: SessionState) -> None:
        known = len(state.fm.messages) if state.fm is not None else 0
        found = store.messages_since(session_id, known)
        if found is None:
            raise UnknownSession(session_id)
        count, rows = found
        if state.fm is None or count < known or (rows and rows[0]["seq"] != known):
            # First use, or the store no longer holds what this copy has (restored from a backup): rebuild.
            state.fm = self.manager_of(state.cache, session_id)
            if known:
                found = store.messages_since(session_id, 0)
                rows = found[1] if found else []
        if rows:
            state.fm.add_messages(rows)  # store rows are turns (role, content, importance, id, attachments)

    async def append(self, store: TenantStore, session_id: str, messages: Sequence[Any]) -> list[MessageOut]:
        """Append messages (``Turn`` records or mappings ``as_turn`` takes), minting each one's id: artifacts
        first, then the rows, in one transaction (the store gives them the session's next positions), then the
        answer: what returns is committed, every message or none. The session must be the tenant's (404
        before any model work); a bad message, image or file is refused before anything is stored."""
        turns = [replace(as_turn(m), id=uuid.uuid4().hex) for m in messages]
        session = await self.session(store, session_id)
        assert session.fm is not None
        await self.run(store.check_room, turns)  # a message over the quota leaves nothing derived behind
        await self.run(session.fm.prepare, turns)
        async with session.lock:
            rows = await self.run(store.append_messages, session_id, turns)
            await self.catch_up(store, session_id, session)
        assert session.fm is not None
        for _ in rows:
            self.on_append()
        return [message_out(session.fm.messages[row["seq"]], row) for row in rows]

    def _evict(self) -> None:
        excess = len(self.loaded) - self.max_loaded
        for key in list(self.loaded)[: max(0, excess)]:
            if not self.loaded[key].lock.locked():
                self._retire(self.loaded.pop(key))

    def forget(self, tenant: str, session_id: str, state: SessionState | None = None) -> None:
        """Let a loaded session go (only ``state``, when given); its queued background jobs are cancelled."""
        key = (tenant, session_id)
        if key in self.loaded and (state is None or self.loaded[key] is state):
            gone = self.loaded.pop(key)
            if gone.fm is not None:
                gone.fm.close()
            self._retire(gone)

    def forget_tenant(self, tenant: str) -> None:
        for owner, session_id in [k for k in self.loaded if k[0] == tenant]:
            self.forget(owner, session_id)

    def _retire(self, state: SessionState) -> None:
        self.retired[0] += state.cache.hits
        self.retired[1] += state.cache.misses

    def cache_counts(self) -> tuple[int, int]:
        caches = [s.cache for s in list(self.loaded.values())]
        return self.retired[0] + sum(c.hits for c in caches), self.retired[1] + sum(c.misses for c in caches)

    async def erase(self, store: TenantStore, session_id: str) -> None:
        """Erase one session of the tenant everywhere: its queued jobs, its loaded copy, its rows and bytes;
        ``UnknownSession`` when the tenant has none by that id."""
        if not valid_session_id(session_id):
            raise UnknownSession(session_id)
        state = self.loaded.get((store.tenant, session_id))
        if state is None:
            erased = await self.run(store.erase_session, session_id)
        else:
            async with state.lock:
                if state.fm is not None:
                    state.fm.close()
                erased = await self.run(store.erase_session, session_id)
                self.forget(store.tenant, session_id)
        if not erased:
            raise UnknownSession(session_id)


def message_out(message: Message, row: dict[str, Any] | None) -> MessageOut:
    """A stored message as a client reads it: as stored, and as AFM sees it."""
    tag = parse_tag(message.raw)[0]
    return MessageOut(
        id=message.id,
        seq=message.index,
        role=message.role,
        content=message.raw,
        importance=message.importance,
        importance_source=message.importance_source,
        importance_override=row.get("importance") if row else None,
        tag=tag,
        tokens_full=message.tokens_full,
        tokens_compressed=message.tokens_compressed,
        tokens_placeholder=message.tokens_placeholder,
        compressed=message.compressed.text,
        placeholder=message.placeholder,
        attachments=[a.summary() for a in message.attachments],
        created=row.get("created") if row else None,
    )
