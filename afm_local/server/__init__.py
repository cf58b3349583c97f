"""The HTTP service: ``create_app`` / ``run_server`` over the engine, with the session store, configured by
one ``ServerSettings``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .settings import ServerSettings

if TYPE_CHECKING:
    from .app import create_app, run_server

__all__ = ["ServerSettings", "create_app", "run_server"]


def __getattr__(name: str) -> Any:
    """``create_app`` and ``run_server`` bring FastAPI and uvicorn: imported when first asked for, so that
    the settings, which the command line reads for every command, stay light."""
    if name in ("create_app", "run_server"):
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
