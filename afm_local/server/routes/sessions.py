"""Persistent sessions: create, list, read, delete, append a message (acknowledged once committed)."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Depends

from ...core.errors import UnknownSession
from ...core.turns import as_turn
from ..schemas import MessageIn, SessionCreated
from ..state import AppState, message_out
from ..store import valid_session_id
from . import app_state

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])


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
    found = await state.run(state.store.messages_since, session_id, 0)
    if info is None or found is None:
        state.forget(session_id)
        raise UnknownSession(session_id)
    rows = {r["id"]: r for r in found[1]}
    return {**info, "messages": [message_out(m, rows.get(m.id)) for m in session.fm.messages]}


@router.delete("/{session_id}")
async def delete_session(session_id: str, state: AppState = Depends(app_state)) -> dict[str, Any]:
    if not valid_session_id(session_id):
        raise UnknownSession(session_id)
    session = state.sessions.get(session_id)
    if session is not None:
        async with session.lock:
            deleted = await state.run(state.store.delete_session, session_id)
            state.forget(session_id)
    else:
        deleted = await state.run(state.store.delete_session, session_id)
    if not deleted:
        raise UnknownSession(session_id)
    return {"id": session_id, "deleted": True}


@router.post("/{session_id}/messages", status_code=201)
async def append_message(session_id: str, body: MessageIn, state: AppState = Depends(app_state)) -> dict[str, Any]:
    """Artifacts first, then the row (the store gives it the session's next position), then the answer:
    ``201`` means committed. See ``server.state`` for how the loaded copy follows the store."""
    session = await state.session(session_id)  # 404 before any model work
    turn = as_turn({**body.model_dump(), "id": uuid.uuid4().hex})
    await state.run(state.prepare_artifacts, turn)  # a bad image or file is refused here: nothing is stored
    importance = turn.importance.value if turn.importance is not None else None
    async with session.lock:
        row = await state.run(
            state.store.append_message, session_id, turn.id, turn.role, turn.content, importance, turn.attachments
        )
        await state.catch_up(session_id, session)
    assert session.fm is not None
    state.appended.inc()
    return message_out(session.fm.messages[row["seq"]], row)
