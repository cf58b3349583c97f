"""The HTTP service: ``create_app`` / ``run_server`` over the engine, with the session store."""

from .app import create_app, run_server
from .settings import ServerSettings

__all__ = ["ServerSettings", "create_app", "run_server"]
