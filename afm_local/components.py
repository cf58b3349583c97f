"""The default local components, built once and shared: one token counter, embedder, classifier
and compressor per process, so a server with many sessions loads each model once."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from .classifier import LayeredClassifier
from .compression import ExtractiveCompressor, KeyphraseTopicer
from .config import AFMConfig
from .models import INSTALL_HINT, ModelError, load_manifest
from .paths import models_dir
from .protocols import Compressor, Embedder, ImportanceClassifier, TokenCounter, Topicer

log = logging.getLogger("afm_local")


@dataclass(slots=True)
class Components:
    """Everything the engine injects into the algorithm. ``abstractive`` is optional and runs in the
    background; ``compressor`` is the instant extractive path that is always available."""

    counter: TokenCounter
    embedder: Embedder
    classifier: ImportanceClassifier
    compressor: Compressor
    topicer: Topicer
    abstractive: Compressor | None = None


def local_classifier(root: Path | None = None, threads: int = 1) -> ImportanceClassifier:
    """The trained ONNX classifier with rules on top when it is installed; the rules alone otherwise."""
    from .importance_model import OnnxImportanceClassifier

    model_dir = (root or models_dir()) / "importance"
    model = OnnxImportanceClassifier(model_dir, threads=threads) if OnnxImportanceClassifier.available(model_dir) else None
    return LayeredClassifier(model)


def local_components(
    config: AFMConfig | None = None,
    *,
    root: Path | None = None,
    threads: int = 1,
    abstractive: bool = False,
) -> Components:
    """Build the on-device stack from the installed models, as ``config`` names them.

    With ``abstractive=True`` the GGUF compressor named by ``config.compressor_model`` is loaded to
    run guarded in the background (``FocusManager()`` does this by default); when its file is not
    installed the extractive compressor does all the work and says so in the log. Without it, tools
    and benchmarks that only need the extractive forms stay light.
    """
    from .embedding import OnnxEmbedder

    config = config or AFMConfig()
    counter = token_counter(config.tokenizer, root)
    embedder = OnnxEmbedder(root, threads=threads)
    extractive = ExtractiveCompressor(counter)
    topicer = KeyphraseTopicer()
    guarded: Compressor | None = None
    if abstractive and config.compressor_model:
        guarded = guarded_llama(config.compressor_model, extractive, embedder, counter, root, threads)
    return Components(counter, embedder, local_classifier(root, threads), extractive, topicer, guarded)


def token_counter(name: str, root: Path | None = None) -> TokenCounter:
    """``o200k_base`` / ``cl100k_base`` (tiktoken, offline), or ``gguf:PATH`` for a model's own tokenizer."""
    from .tokens import GgufTokenCounter, TiktokenCounter

    if name.startswith("gguf:"):
        return GgufTokenCounter(Path(name[5:]))
    return TiktokenCounter(name, root)


def guarded_llama(
    model: str, extractive: Compressor, embedder: Embedder, counter: TokenCounter, root: Path | None, threads: int
) -> Compressor | None:
    """The GGUF compressor behind its guard, or ``None`` (logged) when the model is not installed.

    The model itself loads lazily, on the background worker's first job, so building the components
    stays fast; its sha256 is checked then.
    """
    from .guard import GuardedCompressor, SummaryGuard
    from .llama import LlamaCppCompressor

    if model.endswith(".gguf"):
        path = Path(model).expanduser()
        factory = lambda: LlamaCppCompressor(path, threads=threads)  # noqa: E731
        label = path.stem
    else:
        spec = load_manifest(root).get(model)
        if spec is None or spec.kind != "gguf":
            raise ModelError(f"compressor_model {model!r} is not a GGUF model in the manifest")
        path = (root or models_dir()) / spec.files[0].path
        factory = lambda: LlamaCppCompressor.from_manifest(model, root, threads=threads)  # noqa: E731
        label = model
    if not path.is_file():
        log.warning("abstractive compression off, extractive only: %s is not installed; %s", path, INSTALL_HINT)
        return None
    guarded = GuardedCompressor(factory, extractive, SummaryGuard(embedder, counter))
    guarded.name = f"guarded-llama:{label}"
    return guarded
