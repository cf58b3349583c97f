"""Where model files live: ``$AFM_MODELS_DIR`` if set, else the repository's ``models/`` folder."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def models_dir() -> Path:
    """The folder that holds ``manifest.json`` and every installed model file."""
    env = os.environ.get("AFM_MODELS_DIR")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / "models"
