"""Persistent sessions: create, list, read, delete, append a message (acknowledged once committed)."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Depends

from ...core.errors import UnknownSession
from ...core.types import Message
from ..errors import APIError
from ..schemas import MessageIn, SessionCreated
from ..state import AppState, SessionState, message_out
from ..store import valid_session_id
from . import app_state

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])
APPEND_ATTEMPTS = 3


@router.post("", status_code=201, response_model=SessionCreated)
async def create_session(state: AppState = Depends(app_state)) -> dict[str, Any]:
    return await state.run(state.store.create_session)


@router.get("")
async def list_sessions(limit: int = 100, state: AppState = Depends(app_state)) -> dict[str, Any]:
    return {"sessions": await state.run(state.store.list_sessions, max(1, min(limit, 1000)))}


@router.get("/{session_id}")
async def get_session(session_id: str, state: AppState = Depends(app_state)) -> dict[str, Any]:
    session = await state.session(session_id)
    assert session.fm is not None
    info = await state.run(state.store.get_session, session_id)
    if info is None:
        state.forget(session_id)
        raise APIError(404, "not_found", "unknown session")
    rows = {r["id"]: r for r in await state.run(state.store.messages, session_id)}
    return {**info, "messages": [message_out(m, rows.get(m.id)) for m in session.fm.messages]}


@router.delete("/{session_id}")
async def delete_session(session_id: str, state: AppState = Depends(app_state)) -> dict[str, Any]:
    if not valid_session_id(session_id):
        raise APIError(404, "not_found", "unknown session")
    session = state.sessions.get(session_id)
    if session is not None:
        async with session.lock:
            deleted = await state.run(state.store.delete_session, session_id)
            state.forget(session_id)
    else:
        deleted = await state.run(state.store.delete_session, session_id)
    if not deleted:
        raise APIError(404, "not_found", "unknown session")
    return {"id": session_id, "deleted": True}


@router.post("/{session_id}/messages", status_code=201)
async def append_message(session_id: str, body: MessageIn, state: AppState = Depends(app_state)) -> dict[str, Any]:
    message_id = uuid.uuid4().hex

    def work(session: SessionState) -> tuple[Message, dict[str, Any]]:
        assert session.fm is not None
        message = session.fm.add_messages(
            [{"role": body.role, "content": body.content, "importance": body.importance, "id": message_id}])[0]
        try:  # artifacts are already stored; the row commits last, then we acknowledge
            row = state.store.append_message(session_id, message_id, body.role, body.content, body.importance)
        except BaseException:
            session.fm = None  # the in-memory history may now be ahead of the store: reload it
            raise
        return message, row

    for _ in range(APPEND_ATTEMPTS):
        session = await state.session(session_id)
        async with session.lock:
            # Invalidated, deleted or evicted while we waited: look it up again (or 404 if deleted).
            # Holding the lock of the registered state also keeps it from being evicted meanwhile.
            if session.fm is None or state.sessions.get(session_id) is not session:
                continue
            try:
                message, row = await state.run(work, session)
            except UnknownSession:
                state.forget(session_id)
                raise APIError(404, "not_found", "unknown session") from None
            break
    else:
        raise APIError(503, "unavailable", "the session could not be loaded, retry")
    state.appended.inc()
    return message_out(message, row)
