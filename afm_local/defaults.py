"""The on-device defaults, in plain sight (as llama_index's ``Memory.from_defaults``): ``local_manager()``.

``FocusManager`` takes its components and never builds them; this module sits above the engine and
the local models and joins the two. The components are built once per process for each set of model
names and shared, so every default manager uses the same ONNX sessions.
"""

from __future__ import annotations

from .core.config import AFMConfig
from .engine import ArtifactCache, FocusManager
from .local import shared_local_components


def local_manager(
    config: AFMConfig | None = None, *, cache: ArtifactCache | None = None, threads: int = 1
) -> FocusManager:
    """A ``FocusManager`` over the on-device stack that ``config`` names (``local_components``), built on
    the first call and shared by every later one: the embedder, the classifier, the token counter and
    the background GGUF model when ``config.compressor_model`` names one (none by default)."""
    config = config or AFMConfig()
    return FocusManager(config, components=shared_local_components(config, threads=threads), cache=cache)
