"""Shared real components for the engine tests: loaded once per test process, one thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from afm_local import Components, local_components

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


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
