"""Sentence embeddings with all-MiniLM-L6-v2 on onnxruntime: no torch at run time.

Mean pooling over the word pieces, then L2 normalisation, as sentence-transformers does, so a
dot product is the cosine similarity.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from .model_files import verified_path
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
        self._tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text, in order.

        Each text runs on its own, unpadded. Padded to the longest text of a call, one long message
        made every short one cost 256 word pieces: 30 mixed messages took 7.5 s instead of 0.9 s,
        and on these CPUs batches of similar lengths were no faster than one text at a time. So a
        text's vector never depends on the texts it is embedded with."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(list(texts))):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            vector = self._session.run(["last_hidden_state"], feed)[0][0].mean(axis=0)
            out[row] = vector / max(float(np.linalg.norm(vector)), 1e-12)
        return out
