"""The default local components, built once and shared: one token counter, embedder, classifier
and compressor per process, so a server with many sessions loads each model once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .classifier import LayeredClassifier
from .compression import ExtractiveCompressor, KeyphraseTopicer
from .protocols import Compressor, Embedder, ImportanceClassifier, TokenCounter, Topicer


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
    from .paths import models_dir

    model_dir = (root or models_dir()) / "importance"
    model = OnnxImportanceClassifier(model_dir, threads=threads) if OnnxImportanceClassifier.available(model_dir) else None
    return LayeredClassifier(model)


def local_components(
    root: Path | None = None,
    *,
    threads: int = 1,
    encoding: str = "o200k_base",
    abstractive: str | None = None,
) -> Components:
    """Build the on-device stack from the installed models.

    ``abstractive`` names a GGUF model in the manifest (or a path) to run as a guarded background
    compressor; ``None`` keeps the extractive compressor only.
    """
    from .embedding import OnnxEmbedder
    from .tokens import TiktokenCounter

    counter = TiktokenCounter(encoding, root)
    embedder = OnnxEmbedder(root, threads=threads)
    extractive = ExtractiveCompressor(counter)
    topicer = KeyphraseTopicer()
    guarded: Compressor | None = None
    if abstractive:
        from .guard import GuardedCompressor, SummaryGuard
        from .llama import LlamaCppCompressor

        primary = (
            LlamaCppCompressor(Path(abstractive), threads=threads)
            if Path(abstractive).suffix == ".gguf"
            else LlamaCppCompressor.from_manifest(abstractive, threads=threads)
        )
        guarded = GuardedCompressor(primary, extractive, SummaryGuard(embedder, counter))
    return Components(counter, embedder, local_classifier(root, threads), extractive, topicer, guarded)
