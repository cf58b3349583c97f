"""The HTTP routes, one module per resource. Each reads what it needs through a dependency: the app's
``AppState`` (``app_state``), the caller (``principal``: tenant and key id, set by ``AuthMiddleware``)
and the caller's view of the store (``tenant_store``: every statement scoped to its tenant). A new
route gets its tenant in one line: ``store: TenantStore = Depends(tenant_store)``. The proxies, which
need the request itself, call the same functions on it."""

from fastapi import Request

from ..auth import Principal
from ..state import AppState
from ..store import TenantStore


def app_state(request: Request) -> AppState:
    return request.app.state.afm


def principal(request: Request) -> Principal:
    """Who is calling; ``AuthMiddleware`` sets it on every route but the public ones."""
    return request.scope["state"]["principal"]


def tenant_store(request: Request) -> TenantStore:
    """The store as the caller's tenant sees it, with the tenant's quota."""
    return app_state(request).tenant(principal(request).tenant)
