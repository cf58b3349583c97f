"""Sentence embeddings on onnxruntime (no torch at run time): all-MiniLM-L6-v2 or multilingual-e5-small.

Both are BERT encoders read the same way: the text (with its model's prefix for a query or a passage)
is cut to the model's window, the encoder's last hidden states are mean-pooled over the word pieces
and L2-normalised, as sentence-transformers does, so a dot product is the cosine similarity. What
differs per model is data (``EMBEDDERS``): the manifest entry, the window and the prefixes.

multilingual-e5-small was trained with "query: " and "passage: " prefixes: history messages are
embedded as passages, the current query as a query. MiniLM is symmetric and has no prefixes. The
pooled passage vector is also what a classifier head on frozen features should read
(``embed(texts, "passage")``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import ModelError
from ..core.protocols import EmbedKind
from ..text.checks import GuardConfig
from .model_files import model_spec, verified_files
from .onnx import onnxruntime
from .paths import models_dir


@dataclass(frozen=True, slots=True)
class EmbedderModel:
    """What decides an embedder's vectors besides its weights (its files, window and prefixes), and the
    summary guard's similarity thresholds, which live in the band of its cosines (docs/guard.md)."""

    manifest: str  # the model's entry in models/manifest.json (files model.onnx and tokenizer.json)
    max_tokens: int  # word pieces per text, specials included; longer input is truncated
    prefixes: Mapping[EmbedKind, str]
    guard: GuardConfig


EMBEDDERS: dict[str, EmbedderModel] = {
    # Trained on 256 word pieces; English only (Cyrillic falls apart into single letters). GuardConfig's
    # defaults are its thresholds.
    "minilm-l6-v2": EmbedderModel("minilm-l6-v2", 256, {"passage": "", "query": ""}, GuardConfig()),
    # 512 positions; about 100 languages, pruned here to Latin and Cyrillic script (docs/models.md). Its
    # cosines sit in a narrow, high band: one threshold for both languages.
    "multilingual-e5-small": EmbedderModel(
        "multilingual-e5-small",
        512,
        {"passage": "passage: ", "query": "query: "},
        GuardConfig(min_similarity=0.91, min_similarity_cyrillic=None, min_topic_similarity=0.78),
    ),
}


SPLIT_PREFIX = "hidden_states_"  # an extra output: the hidden states where a fine-tuned classifier takes over
RECENT_BYTES = 64 << 20  # passages' hidden states kept for the classifier that reads them next


def embedder_model(name: str) -> EmbedderModel:
    model = EMBEDDERS.get(name)
    if model is None:
        raise ModelError(f"unknown embedder {name!r}; choose one of {', '.join(sorted(EMBEDDERS))}")
    return model


class OnnxEmbedder:
    """A BERT sentence encoder on onnxruntime; its files are verified by sha256 when loaded.

    ``name`` keys the engine's artifact cache, so it carries a fingerprint of everything that decides
    the vectors (the pinned sha256 of every file, the window, the prefixes): a new model file or a
    new prefix gives a new name, and no vector of the old one is ever reused."""

    dim = 384

    def __init__(self, model: str = "minilm-l6-v2", root: Path | None = None, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        ort = onnxruntime()
        root = root or models_dir()
        self.model = embedder_model(model)
        files = verified_files(self.model.manifest, root)
        pins = sorted((f.path, f.sha256) for f in model_spec(self.model.manifest, root).files)
        recipe = json.dumps([pins, self.model.max_tokens, sorted(self.model.prefixes.items())])
        self.name = f"{model}@{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"
        self._tokenizer = Tokenizer.from_file(str(files["tokenizer.json"]))
        self._tokenizer.enable_truncation(self.model.max_tokens)
        self._tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(files["model.onnx"]), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        split = [o.name for o in self._session.get_outputs() if o.name.startswith(SPLIT_PREFIX)]
        self.split_output: str | None = split[0] if split else None
        self._outputs = ["last_hidden_state", *split]
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._recent_bytes = 0
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray:
        """One L2-normalised row per text, in order; ``kind`` picks the model's prefix.

        Each text runs on its own, unpadded. Padded to the longest text of a call, one long message
        made every short one cost the whole window: 30 mixed messages took 7.5 s instead of 0.9 s
        with MiniLM, and on these CPUs batches of similar lengths were no faster than one text at a
        time. So a text's vector never depends on the texts it is embedded with."""
        vectors, states, _ = self._run(texts, kind)
        if kind == "passage" and self.split_output is not None:
            for text, state in zip(texts, states):
                self._remember(text, state)
        return vectors

    def embed_sentences(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Passage vectors and, from the same pass, one vector per span: the mean of the last hidden states
        of the word pieces inside it, L2-normalised (a sentence read in its message's context)."""
        vectors, states, sentences = self._run(texts, "passage", spans)
        if self.split_output is not None:
            for text, state in zip(texts, states):
                self._remember(text, state)
        return vectors, sentences

    def hidden_states(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The passages' hidden states at ``split_output``, (word pieces, dim) per text: taken from the
        texts this embedder has just embedded (ingest embeds, then classifies), else computed."""
        if self.split_output is None:
            raise ModelError(f"embedder {self.name} has no {SPLIT_PREFIX}* output; run `afm-local models install`")
        found = self._take(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, self._run(missing, "passage")[1]))
        return [found[t] for t in texts]

    def _run(
        self, texts: Sequence[str], kind: EmbedKind, spans: Sequence[Sequence[tuple[int, int]]] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Pooled vectors, the hidden states at ``split_output`` when the graph has it, and the pooled vectors
        of ``spans`` (character offsets into each text) when they are asked for."""
        prefix = self.model.prefixes[kind]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        states: list[np.ndarray] = []
        sentences: list[np.ndarray] = []
        for row, encoding in enumerate(self._tokenizer.encode_batch([prefix + t for t in texts])):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            hidden, *split = self._session.run(self._outputs, {k: v for k, v in feed.items() if k in self._inputs})
            out[row] = _normalised(hidden[0].mean(axis=0))
            states += [split[0][0]] if split else []
            if spans is not None:
                offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2) - len(prefix)
                sentences.append(_pooled(hidden[0], offsets, spans[row], out[row]))
        return out, states, sentences

    def _take(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            found = {t: self._recent.pop(t) for t in set(texts) if t in self._recent}
            self._recent_bytes -= sum(states.nbytes for states in found.values())
        return found

    def _remember(self, text: str, states: np.ndarray) -> None:
        with self._lock:
            old = self._recent.pop(text, None)
            self._recent_bytes -= old.nbytes if old is not None else 0
            self._recent[text] = states
            self._recent_bytes += states.nbytes
            while self._recent_bytes > RECENT_BYTES and len(self._recent) > 1:
                self._recent_bytes -= self._recent.popitem(last=False)[1].nbytes


def _normalised(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def _pooled(hidden: np.ndarray, offsets: np.ndarray, spans: Sequence[tuple[int, int]], whole: np.ndarray) -> np.ndarray:
    """The mean hidden state of the word pieces inside each span, as unit rows; a span that the window cut
    off (or that holds no word piece) takes the whole text's vector."""
    inside = (offsets[:, 1] > offsets[:, 0]) & (offsets[:, 0] >= 0)
    out = np.empty((len(spans), hidden.shape[1]), dtype=np.float32)
    for k, (a, b) in enumerate(spans):
        mask = inside & (offsets[:, 0] >= a) & (offsets[:, 1] <= b)
        out[k] = _normalised(hidden[mask].mean(axis=0)) if mask.any() else whole
    return out
