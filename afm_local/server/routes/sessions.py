"""Persistent sessions: create, list, read, erase, append a message (acknowledged once committed). Every
store call goes through the caller's ``TenantStore``: another tenant's session is a missing one."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from ...core.errors import UnknownSession
from ..schemas import ERROR_RESPONSES, MessageIn, MessageOut, SessionCreated, SessionErased, SessionList, SessionOut
from ..sessions import message_out
from ..state import AppState
from ..store import TenantStore
from . import app_state, tenant_store

router = APIRouter(prefix="/v1/sessions", tags=["sessions"], responses=ERROR_RESPONSES)


@router.post("", status_code=201, response_model=SessionCreated)
async def create_session(
    state: AppState = Depends(app_state), store: TenantStore = Depends(tenant_store)
) -> dict[str, Any]:
    return await state.run(store.create_session)


@router.get("", response_model=SessionList)
async def list_sessions(
    limit: int = 100, state: AppState = Depends(app_state), store: TenantStore = Depends(tenant_store)
) -> dict[str, Any]:
    return {"sessions": await state.run(store.list_sessions, max(1, min(limit, 1000)))}


@router.get("/{session_id}", response_model=SessionOut)
async def get_session(
    session_id: str, state: AppState = Depends(app_state), store: TenantStore = Depends(tenant_store)
) -> dict[str, Any]:
    return await session_out(state, store, session_id)


async def session_out(state: AppState, store: TenantStore, session_id: str) -> dict[str, Any]:
    """A session with every message as stored and as AFM sees it (also what export writes)."""
    fm = await state.sessions.manager(store, session_id)
    info = await state.run(store.get_session, session_id)
    found = await state.run(store.messages_since, session_id, 0)
    if info is None or found is None:
        state.sessions.forget(store.tenant, session_id)
        raise UnknownSession(session_id)
    rows = {r["id"]: r for r in found[1]}
    messages = [message_out(m, rows.get(m.id)) for m in fm.messages]
    return {"id": info["id"], "created": info["created"], "messages": messages}


@router.delete("/{session_id}", response_model=SessionErased)
async def delete_session(
    session_id: str, state: AppState = Depends(app_state), store: TenantStore = Depends(tenant_store)
) -> dict[str, Any]:
    """Erase the session: its messages, its artifacts, its queued background jobs, and the bytes on disk
    as far as the store can reach them (docs/server.md, Erasure)."""
    await state.sessions.erase(store, session_id)
    return {"id": session_id, "deleted": True}


@router.post("/{session_id}/messages", status_code=201, response_model=MessageOut)
async def append_message(
    session_id: str,
    body: MessageIn,
    state: AppState = Depends(app_state),
    store: TenantStore = Depends(tenant_store),
) -> MessageOut:
    """``201`` means committed (``Sessions.append``); a bad image or file is refused before anything is stored."""
    return (await state.sessions.append(store, session_id, [body.model_dump()]))[0]
