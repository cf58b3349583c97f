"""Sentence embeddings with all-MiniLM-L6-v2 on onnxruntime: no torch at run time.

Mean pooling over the attention mask, then L2 normalisation, as sentence-transformers does, so a
dot product is the cosine similarity.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from .models import verified_path
from .paths import models_dir

MAX_TOKENS = 256  # the model was trained on 256 word pieces; longer input is truncated


class OnnxEmbedder:
    """all-MiniLM-L6-v2 int8 ONNX; verified by sha256 when loaded."""

    name = "minilm-l6-v2-int8"
    dim = 384

    def __init__(self, root: Path | None = None, threads: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        root = root or models_dir()
        model = verified_path("embedder", "model.onnx", root)
        tokenizer = verified_path("embedder", "tokenizer.json", root)
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
