"""Health, metrics and the static inspector page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..._version import __version__
from ...core.errors import StoreError
from ..errors import error_body
from ..schemas import Health
from ..state import AppState
from . import app_state

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
INSPECTOR_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

router = APIRouter()


@router.get("/healthz", tags=["ops"], response_model=Health, responses={503: {"model": Health}})
async def healthz(state: AppState = Depends(app_state)) -> Any:
    """``200`` when this worker can use its store (reachable, and the same database it opened), else
    ``503``. The route needs no key, so the reason goes to the server log only, once per change."""
    ready = state.components is not None
    try:  # not in the request pool: a health check must answer while every slot is busy
        await anyio.to_thread.run_sync(state.store.check)
    except StoreError as exc:
        state.report_health(str(exc))
        return JSONResponse(
            {
                "status": "unavailable",
                "version": __version__,
                "ready": ready,
                **error_body("storage_unavailable", "the store cannot be used; see the server log"),
            },
            status_code=503,
        )
    state.report_health(None)
    return {"status": "ok", "version": __version__, "ready": ready}


@router.get("/", include_in_schema=False)
async def inspector() -> Response:
    html = (STATIC_DIR / "inspector.html").read_bytes()
    return Response(
        html,
        media_type="text/html; charset=utf-8",
        headers={
            "Content-Security-Policy": INSPECTOR_CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )


@router.get("/metrics", tags=["ops"], response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics(state: AppState = Depends(app_state)) -> Response:
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
