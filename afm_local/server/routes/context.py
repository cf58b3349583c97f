"""Packed contexts: for a stored session, or stateless for a history sent in the request."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from ...core.split import Split
from ...core.turns import as_turn
from ..auth import Principal
from ..packing import PackOptions, pack_session, pack_split
from ..schemas import ERROR_RESPONSES, ContextOptions, ContextOut, StatelessContextRequest
from ..state import AppState
from ..store import TenantStore
from . import app_state, principal, tenant_store

router = APIRouter(tags=["context"], responses=ERROR_RESPONSES)
SESSION_ROUTE = "/v1/sessions/{session_id}/context"
STATELESS_ROUTE = "/v1/context"


@router.post(SESSION_ROUTE, response_model=ContextOut)
async def session_context(
    session_id: str,
    body: ContextOptions,
    state: AppState = Depends(app_state),
    store: TenantStore = Depends(tenant_store),
) -> JSONResponse:
    opts = PackOptions.of(body, body.budget_tokens)
    ctx, original = await pack_session(state, store, session_id, body.query, body.system_preamble, opts)
    return JSONResponse(ctx.to_dict(), headers=state.metrics.count_context(ctx, original, SESSION_ROUTE))


@router.post(STATELESS_ROUTE, response_model=ContextOut)
async def stateless_context(
    body: StatelessContextRequest, state: AppState = Depends(app_state), caller: Principal = Depends(principal)
) -> JSONResponse:
    """The history is the ``messages`` sent, the query ``query``: nothing follows it."""
    split = Split(body.system_preamble, tuple(as_turn(m.model_dump()) for m in body.messages), body.query)
    ctx, original = await pack_split(state, caller.tenant, split, PackOptions.of(body, body.budget_tokens))
    return JSONResponse(ctx.to_dict(), headers=state.metrics.count_context(ctx, original, STATELESS_ROUTE))
