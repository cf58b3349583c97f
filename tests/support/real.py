"""Shared real components for the engine tests: loaded once per test process, one thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from afm_local import Components, local_components
from afm_local.local import model_files as models

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIX = "afm-local models install"


def installed(name: str) -> bool:
    """Whether every file of model ``name`` is installed and matches its sha256."""
    states = models.verify(names=[name])
    return bool(states) and all(s.state == "ok" for s in states)


@lru_cache(maxsize=1)
def shared_components() -> Components:
    return local_components(threads=1)


def example(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def afm(*args: str, stdin: str | None = None, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the ``afm-local`` command in a child process, with ``env`` on top of this one's."""
    return subprocess.run(
        [sys.executable, "-m", "afm_local", *args], input=stdin, capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=timeout,
    )
