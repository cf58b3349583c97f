"""The on-device components: one token counter, embedder, classifier and compressor, built from the
installed models. ``local_components`` builds them afresh; ``shared_local_components`` builds them once
per process for each set of model names, so every default manager and every server session shares one
set of ONNX sessions. The engine never imports this module."""

from __future__ import annotations

import logging
import os
from functools import cache, partial
from pathlib import Path

from ..core.config import AFMConfig
from ..core.errors import ModelError
from ..core.protocols import Components, Compressor, Embedder, ImportanceClassifier, MediaReader, TokenCounter
from ..text.checks import GuardConfig, SummaryGuard
from ..text.classifier import LayeredClassifier
from ..text.extractive import ExtractiveCompressor
from ..text.guarded import GuardedCompressor
from ..text.topics import KeyphraseTopicer
from .embedding import embedder_model
from .model_files import INSTALL_HINT
from .paths import models_dir

log = logging.getLogger("afm_local")

TESSDATA = Path("/usr/share/tesseract-ocr/5/tessdata")  # Debian's tesseract-ocr-eng and tesseract-ocr-rus
OCR_LANGUAGES = "eng+rus"
OCR_HINT = "apt-get install tesseract-ocr-eng tesseract-ocr-rus (scripts/test.sh does, as root), or set TESSDATA_PREFIX"


def local_classifier(
    root: Path | None = None, threads: int = 1, encoder: Embedder | None = None
) -> ImportanceClassifier:
    """The trained classifier (with the rule categories it allows on top) when it is installed; the
    rules alone otherwise. It continues multilingual-e5-small's layers: pass the engine's e5 embedder as
    ``encoder`` so a message is read once, else it loads its own."""
    from .embedding import OnnxEmbedder
    from .importance import EncoderHeadClassifier

    model_dir = (root or models_dir()) / "importance"
    if not EncoderHeadClassifier.available(model_dir, root):  # the files are hashed here, once per process
        log.warning("importance model not installed, the rules stand alone; %s", INSTALL_HINT)
        return LayeredClassifier(None)
    if not isinstance(encoder, OnnxEmbedder) or encoder.split_output is None:
        encoder = OnnxEmbedder("multilingual-e5-small", root, threads=threads)
    model = EncoderHeadClassifier(model_dir, encoder, threads=threads, root=root)
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
    guarded: Compressor | None = None
    if abstractive and config.compressor_model:
        guard = SummaryGuard(embedder, counter, guard_config(config.embedder))
        guarded = guarded_llama(config.compressor_model, extractive, guard, root, threads)
    classifier = local_classifier(root, threads, embedder)
    return Components(counter, embedder, classifier, extractive, KeyphraseTopicer(), guarded, media_reader())


def media_reader(tessdata: Path | None = None) -> MediaReader:
    """The on-device reader of images and documents, with Tesseract OCR (English and Russian) when its
    data is installed (``tessdata``, else ``$TESSDATA_PREFIX``, else Debian's folder); without it OCR is
    off, said once in the log, and an image is known by its caption and file name."""
    from ..media.ocr import TesseractOcr
    from ..media.reader import LocalMediaReader

    folder = tessdata or Path(os.environ.get("TESSDATA_PREFIX") or TESSDATA)
    try:
        return LocalMediaReader(TesseractOcr(folder, OCR_LANGUAGES))
    except (ImportError, OSError, RuntimeError) as exc:
        _warn_once(f"OCR is off, images are read by caption and file name only ({exc}); {OCR_HINT}")
        return LocalMediaReader(None)


@cache
def _warn_once(message: str) -> None:
    log.warning("%s", message)


def shared_local_components(config: AFMConfig | None = None, *, threads: int = 1) -> Components:
    """``local_components(config, abstractive=True)``, built on the first call for the models ``config``
    names (embedder, tokenizer, background model) and the models folder, then shared by every call."""
    config = config or AFMConfig()
    names = AFMConfig(embedder=config.embedder, tokenizer=config.tokenizer, compressor_model=config.compressor_model)
    return _shared(names, models_dir(), threads)


@cache
def _shared(names: AFMConfig, root: Path, threads: int) -> Components:
    return local_components(names, root=root, threads=threads, abstractive=True)


def token_counter(name: str, root: Path | None = None) -> TokenCounter:
    """``o200k_base`` / ``cl100k_base`` (tiktoken, offline), or ``gguf:PATH`` for a model's own tokenizer."""
    from .tokens import GgufTokenCounter, TiktokenCounter

    if name.startswith("gguf:"):
        return GgufTokenCounter(Path(name[5:]))
    return TiktokenCounter(name, root)


def guard_config(embedder: str) -> GuardConfig:
    """The summary guard's thresholds for the embedder of that name (``EMBEDDERS``; docs/guard.md)."""
    return embedder_model(embedder).guard


def guarded_llama(
    model: str, extractive: Compressor, guard: SummaryGuard, root: Path | None, threads: int
) -> Compressor | None:
    """The GGUF compressor behind its guard, or ``None`` (logged) when the model is not installed.

    The file is checked here (``gguf_file``); the model itself loads lazily, on the background worker's
    first job, so building the components stays fast.
    """
    from .llama import LlamaCppCompressor, gguf_file

    try:
        path = gguf_file(model, root)
    except ModelError as exc:
        log.warning("abstractive compression off, extractive only: %s", exc)
        return None
    label = path.stem if model.endswith(".gguf") else model
    factory = partial(LlamaCppCompressor, path, name=None if model.endswith(".gguf") else model, threads=threads)
    guarded = GuardedCompressor(factory, extractive, guard)
    guarded.name = f"guarded-llama:{label}"
    return guarded
