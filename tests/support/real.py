"""The real components and the ``afm-local`` command, for the integration and server tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from afm_local import Components
from afm_local.local import model_files as models
from afm_local.local import shared_local_components

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIX = "afm-local models install"


def installed(name: str) -> bool:
    """Whether every file of model ``name`` is installed and matches its sha256."""
    states = models.verify(names=[name])
    return bool(states) and all(s.state == "ok" for s in states)


def shared_components() -> Components:
    """The default on-device stack, one thread, built once per process (the one ``local_manager()`` uses)."""
    return shared_local_components(threads=1)


def example(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def afm(
    *args: str, stdin: str | None = None, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run the ``afm-local`` command in a child process, with ``env`` on top of this one's."""
    return subprocess.run(
        [sys.executable, "-m", "afm_local", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
