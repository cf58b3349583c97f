"""Packed contexts: for a stored session, or stateless for a history sent in the request."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from ...core.types import Context
from ..auth import Principal
from ..schemas import ERROR_RESPONSES, ContextOptions, ContextOut, StatelessContextRequest
from ..state import AppState, pack_with_baseline
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
    session = await state.session(store, session_id)
    assert session.fm is not None
    ctx, original = await state.run(
        pack_with_baseline, session.fm, body.query, body.budget_tokens, body.system_preamble, body.render, body.packing
    )
    return JSONResponse(ctx.to_dict(), headers=state.count_context(ctx, original, SESSION_ROUTE))


@router.post(STATELESS_ROUTE, response_model=ContextOut)
async def stateless_context(
    body: StatelessContextRequest, state: AppState = Depends(app_state), caller: Principal = Depends(principal)
) -> JSONResponse:
    cache = state.stateless_cache(caller.tenant)

    def work() -> tuple[Context, int]:
        fm = state.manager(cache)
        fm.add_messages([m.model_dump() for m in body.messages])
        return pack_with_baseline(fm, body.query, body.budget_tokens, body.system_preamble, body.render, body.packing)

    ctx, original = await state.run(work)
    return JSONResponse(ctx.to_dict(), headers=state.count_context(ctx, original, STATELESS_ROUTE))
