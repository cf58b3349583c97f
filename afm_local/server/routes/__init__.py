"""The HTTP routes, one module per resource; each reads the app's ``AppState`` through ``app_state``."""

from fastapi import Request

from ..state import AppState


def app_state(request: Request) -> AppState:
    return request.app.state.afm
