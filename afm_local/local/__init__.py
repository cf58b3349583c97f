"""The on-device models: the manifest and its one verification, paths, token counters, the
embedder, the importance model, the one llama.cpp loader, and ``local_components()``."""

from . import onnx  # first: telemetry off before any model module can import onnxruntime
from .components import local_classifier, local_components, shared_local_components, token_counter

__all__ = ["onnx", "local_classifier", "local_components", "shared_local_components", "token_counter"]
