"""onnxruntime, imported once with its telemetry off: nothing the runtime does may leave the machine.

onnxruntime can send usage events (on some builds, a lookup of ``mobile.events.data.microsoft.com``
about every 90 s and a queue of device and process details under ``~/.cache/Microsoft``). Importing
``afm_local`` or any module of it imports ``afm_local.local``, which imports this module first: it sets
``ORT_DISABLE_TELEMETRY=1`` (unless the operator set it) before any onnxruntime import of afm-local, so
every entry point (the CLI, the server and its workers, the MCP server) and the library API start with
it. ``onnxruntime()`` is the one import of the runtime; it also switches the events off through the
runtime's own call, where the installed version has one (for a process that imported onnxruntime first).
"""

from __future__ import annotations

import os
import threading
from types import ModuleType

TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"

_lock = threading.Lock()
_module: ModuleType | None = None


def disable_telemetry_env() -> None:
    """Before onnxruntime is first imported: its telemetry stays off in this process and its children."""
    os.environ.setdefault(TELEMETRY_ENV, "1")


disable_telemetry_env()  # at import: ``afm_local.local`` imports this module first, before any model loads


def onnxruntime() -> ModuleType:
    """The ``onnxruntime`` module, its telemetry events disabled (once per process)."""
    global _module
    with _lock:
        if _module is None:
            disable_telemetry_env()
            import onnxruntime as ort

            off = getattr(ort, "disable_telemetry_events", None)
            if callable(off):
                off()
            _module = ort
        return _module
