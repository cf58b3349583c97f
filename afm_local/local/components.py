"""The on-device components, built once and shared: one token counter, embedder, classifier and
compressor per process, so a server with many sessions loads each model once. This is the heavy
default that ``FocusManager()`` is one call away from; the engine itself never imports it."""

from __future__ import annotations

import logging
from pathlib import Path

from ..text.classifier import LayeredClassifier
from ..text.checks import GuardConfig
from ..text.extractive import ExtractiveCompressor
from ..text.topics import KeyphraseTopicer
from ..core.config import AFMConfig
from .model_files import INSTALL_HINT
from .paths import models_dir
from ..core.protocols import Components, Compressor, Embedder, ImportanceClassifier, TokenCounter

log = logging.getLogger("afm_local")


def local_classifier(root: Path | None = None, threads: int = 1, encoder: Embedder | None = None) -> ImportanceClassifier:
    """The trained classifier (with the rule categories it allows on top) when it is installed; the
    rules alone otherwise. It continues multilingual-e5-small's layers: pass the engine's e5 embedder as
    ``encoder`` so a message is read once, else it loads its own."""
    from .embedding import OnnxEmbedder
    from .importance import EncoderHeadClassifier

    model_dir = (root or models_dir()) / "importance"
    if not EncoderHeadClassifier.available(model_dir):
        log.warning("importance model not installed, the rules stand alone; %s", INSTALL_HINT)
        return LayeredClassifier(None)
    if not isinstance(encoder, OnnxEmbedder) or encoder.split_output is None:
        encoder = OnnxEmbedder("multilingual-e5-small", root, threads=threads)
    model = EncoderHeadClassifier(model_dir, encoder, threads=threads)
    return LayeredClassifier(model, model.config.get("rule_overrides", []))


def local_components(
    config: AFMConfig | None = None,
    *,
    root: Path | None = None,
    threads: int = 1,
    abstractive: bool = False,
) -> Components:
    """Build the on-device stack from the installed models, as ``config`` names them (the embedder
    by ``config.embedder``, the token counter by ``config.tokenizer``, the background model by
    ``config.compressor_model``).

    With ``abstractive=True`` the GGUF compressor named by ``config.compressor_model`` (``None`` by
    default, so nothing) is loaded to run guarded in the background; when its file is not installed
    the extractive compressor does all the work and says so in the log. Without it, tools and
    benchmarks that only need the extractive forms stay light.
    """
    from .embedding import OnnxEmbedder

    config = config or AFMConfig()
    counter = token_counter(config.tokenizer, root)
    embedder = OnnxEmbedder(config.embedder, root, threads=threads)
    extractive = ExtractiveCompressor(counter)
    topicer = KeyphraseTopicer()
    guarded: Compressor | None = None
    if abstractive and config.compressor_model:
        guarded = guarded_llama(config.compressor_model, extractive, embedder, counter, root, threads)
    return Components(counter, embedder, local_classifier(root, threads, embedder), extractive, topicer, guarded)


def token_counter(name: str, root: Path | None = None) -> TokenCounter:
    """``o200k_base`` / ``cl100k_base`` (tiktoken, offline), or ``gguf:PATH`` for a model's own tokenizer."""
    from .tokens import GgufTokenCounter, TiktokenCounter

    if name.startswith("gguf:"):
        return GgufTokenCounter(Path(name[5:]))
    return TiktokenCounter(name, root)


def guard_config(embedder: Embedder) -> GuardConfig:
    """The guard's similarity thresholds belong to the embedder: MiniLM's are the defaults; e5's cosines sit
    in a higher, narrower band, where one threshold separates faithful summaries from other messages'
    in both languages (docs/benchmarks/embedder.md)."""
    if embedder.name.startswith("multilingual-e5-small@"):
        return GuardConfig(min_similarity=0.91, min_similarity_cyrillic=None, min_topic_similarity=0.78)
    return GuardConfig()


def guarded_llama(
    model: str, extractive: Compressor, embedder: Embedder, counter: TokenCounter, root: Path | None, threads: int
) -> Compressor | None:
    """The GGUF compressor behind its guard, or ``None`` (logged) when the model is not installed.

    The model itself loads lazily, on the background worker's first job, so building the components
    stays fast; its sha256 is checked then.
    """
    from ..text.checks import SummaryGuard
    from ..text.guarded import GuardedCompressor
    from .llama import LlamaCppCompressor, gguf_path

    path = gguf_path(model, root)
    if not path.is_file():
        log.warning("abstractive compression off, extractive only: %s is not installed; %s", path, INSTALL_HINT)
        return None
    label = path.stem if model.endswith(".gguf") else model
    if model.endswith(".gguf"):
        factory = lambda: LlamaCppCompressor(path, threads=threads)  # noqa: E731
    else:
        factory = lambda: LlamaCppCompressor.from_manifest(model, root, threads=threads)  # noqa: E731
    guarded = GuardedCompressor(factory, extractive, SummaryGuard(embedder, counter, guard_config(embedder)))
    guarded.name = f"guarded-llama:{label}"
    return guarded
