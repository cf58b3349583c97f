"""Shared real components for the engine tests: loaded once per test process, one thread."""

from __future__ import annotations

import json
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
