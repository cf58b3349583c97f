"""Persistent sessions: create, list, read, delete, append a message (acknowledged once committed)."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Depends

from ...core.errors import UnknownSession
from ...core.turns import as_turn
from ..schemas import MessageIn, SessionCreated
from ..state import AppState, message_out
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
    await state.delete(session_id)
    return {"id": session_id, "deleted": True}


@router.post("/{session_id}/messages", status_code=201)
async def append_message(session_id: str, body: MessageIn, state: AppState = Depends(app_state)) -> dict[str, Any]:
    """``201`` means committed (``AppState.append``); a bad image or file is refused before anything is stored."""
    return await state.append(session_id, as_turn({**body.model_dump(), "id": uuid.uuid4().hex}))
