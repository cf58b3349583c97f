"""The caller's tenant: who it is and what it uses, export of everything it stored, erasure of all of it.

Export and erasure are the data subject's access and erasure rights when a tenant is one person; a
single session has both too (``GET /v1/sessions/{id}`` is its export, ``DELETE /v1/sessions/{id}``)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Depends

from ...core.errors import UnknownSession
from ..auth import Principal
from ..schemas import ERROR_RESPONSES, TenantErased, TenantExport, TenantInfo
from ..state import AppState
from ..store import TenantStore
from . import app_state, principal, tenant_store
from .sessions import session_out

router = APIRouter(tags=["tenant"], responses=ERROR_RESPONSES)


@router.get("/v1/tenant", response_model=TenantInfo)
async def tenant_info(
    state: AppState = Depends(app_state),
    store: TenantStore = Depends(tenant_store),
    caller: Principal = Depends(principal),
) -> dict[str, Any]:
    quota = state.settings.quota
    return {
        "tenant": caller.tenant,
        "key_id": caller.key_id,
        "usage": await state.run(store.usage),
        "quota": {
            "sessions": quota.sessions,
            "messages": quota.messages,
            "bytes": quota.bytes,
            "requests_per_second": state.settings.rate_limit or None,
        },
    }


@router.get("/v1/tenant/export", response_model=TenantExport)
async def export_tenant(
    state: AppState = Depends(app_state), store: TenantStore = Depends(tenant_store)
) -> dict[str, Any]:
    """Every session of the tenant with every message (content, importance, tag, token counts); bounded
    by the tenant's session quota."""
    limit = state.settings.quota.sessions or 1_000_000_000
    sessions = []
    for listed in await state.run(store.list_sessions, limit):
        try:
            sessions.append(await session_out(state, store, listed["id"]))
        except UnknownSession:
            continue  # erased since it was listed
    return {"tenant": store.tenant, "exported": time.time(), "sessions": sessions}


@router.delete("/v1/tenant", response_model=TenantErased)
async def erase_tenant(
    state: AppState = Depends(app_state), store: TenantStore = Depends(tenant_store)
) -> dict[str, Any]:
    """Erase everything the tenant stored (its keys stay: revoke them with ``afm-local keys revoke``)."""
    return {"tenant": store.tenant, "sessions_erased": await state.erase_tenant(store)}
