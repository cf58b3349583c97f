"""The trained importance classifier at run time: onnxruntime + tokenizers + numpy, nothing else.

``models/importance/`` holds an int8 MiniLM sequence classifier (``model.onnx``), an optional char
and word n-gram TF-IDF + logistic-regression model (``ngram.onnx``), ``tokenizer.json``, ``labels.json``
(label order, ensemble weights, decision rule, max_len) and ``model_card.json`` (sha256 of every
file). Every file is checked against the card before anything is loaded.

This module only labels messages. Tags and the rule layer (``afm_local.rules``) are layered on top
by the engine; none of that logic lives here. It never imports torch or transformers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ..core.errors import ModelError
from ..core.types import Classification, Importance
from ..text.lexicon import detect_language
from .model_files import INSTALL_HINT, check_file

LABELS: tuple[str, ...] = ("CRITICAL", "RELEVANT", "TRIVIAL")


def ngram_text(text: str) -> str:
    """What the n-gram model reads: lowercased, every run of whitespace folded to one space.

    The ONNX tokenizer and scikit-learn treat newlines differently; folded, they see the same
    characters, so the exported model gives scikit-learn's probabilities (training checks it)."""
    return " ".join(text.lower().split())


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _blend(encoder: np.ndarray, ngram: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The ensemble: per row, ``w * encoder + (1 - w) * ngram``."""
    return w[:, None] * encoder + (1.0 - w[:, None]) * ngram


def verify_model_dir(model_dir: Path) -> dict:
    """Check every file named in ``model_card.json`` against its sha256; return the card."""
    model_dir = Path(model_dir)
    card_path = model_dir / "model_card.json"
    if not card_path.is_file():
        raise ModelError(f"no importance model at {model_dir} (model_card.json missing); {INSTALL_HINT}")
    card = json.loads(card_path.read_text(encoding="utf-8"))
    files = card.get("files_sha256") or {}
    if "labels.json" not in files or "tokenizer.json" not in files or "model.onnx" not in files:
        raise ModelError(f"{card_path} lists no sha256 for the model files; {INSTALL_HINT}")
    for name, expected in files.items():
        check_file(model_dir / name, expected)
    return card


class OnnxImportanceClassifier:
    """CRITICAL / RELEVANT / TRIVIAL from the exported model (source ``"model"``).

    Each message is run on its own (no padding), so a message's label never depends on the other
    messages in the call, and the int8 activation scales are not polluted by padding.
    """

    def __init__(self, model_dir: Path, threads: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.model_dir = Path(model_dir)
        self.card = verify_model_dir(self.model_dir)
        self.config = json.loads((self.model_dir / "labels.json").read_text(encoding="utf-8"))
        self.labels: list[str] = list(self.config["labels"])
        if sorted(self.labels) != sorted(LABELS):
            raise ModelError(f"unexpected labels {self.labels} in labels.json; {INSTALL_HINT}")
        self.max_len = int(self.config["max_len"])
        # The name keys cached verdicts, so it changes whenever any model file does.
        digest = hashlib.sha256(json.dumps(self.card["files_sha256"], sort_keys=True).encode()).hexdigest()[:12]
        self.name = f"onnx:{self.card.get('name', 'importance')}@{digest}"

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3
        providers = ["CPUExecutionProvider"]
        self._session = ort.InferenceSession(str(self.model_dir / self.config["files"]["model"]), opts, providers=providers)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._ngram = None
        ngram_file = self.config["files"].get("ngram")
        if ngram_file:
            self._ngram = ort.InferenceSession(str(self.model_dir / ngram_file), opts, providers=providers)
            self._ngram_input = self._ngram.get_inputs()[0].name
            self._ngram_prob = next(o.name for o in self._ngram.get_outputs() if "prob" in o.name)
        self._tok = Tokenizer.from_file(str(self.model_dir / self.config["files"]["tokenizer"]))
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=self.max_len)

    @classmethod
    def available(cls, model_dir: Path) -> bool:
        """True when every model file is present and matches the sha256 in its card."""
        try:
            verify_model_dir(Path(model_dir))
        except (ModelError, OSError, ValueError):
            return False
        return True

    # -- parts, public so the training script and benchmarks measure exactly what runs here --
    def encoder_probs(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(self.labels)), dtype=np.float64)
        for i, enc in enumerate(self._tok.encode_batch(list(texts))):
            ids = np.asarray([enc.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            logits = self._session.run(["logits"], feed)[0]
            out[i] = _softmax(logits.astype(np.float64))[0]
        return out

    def ngram_probs(self, texts: Sequence[str]) -> np.ndarray | None:
        if self._ngram is None or not texts:
            return None
        x = np.asarray([ngram_text(t) for t in texts], dtype=object).reshape(-1, 1)
        return np.asarray(self._ngram.run([self._ngram_prob], {self._ngram_input: x})[0], dtype=np.float64)

    def fits(self, texts: Sequence[str]) -> list[bool]:
        """Whether the encoder reads each text whole: it fits in ``max_len`` word pieces.

        The encoder votes only on such texts. Cut off after ``max_len`` pieces, a long message is
        judged on its greeting or its first plans, while the constraint sits further on; on
        validation the encoder's vote on those messages cost more than it gained, and the n-gram
        model, which reads every message whole, decides them alone."""
        return [not enc.overflowing for enc in self._tok.encode_batch(list(texts))]

    def probs(self, texts: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """Ensembled per-class probabilities (columns in ``self.labels`` order) and each text's language.

        The n-gram model runs first, because it is cheap. The encoder then runs only for messages
        whose label it could still change: the ensemble is ``w * encoder + (1 - w) * ngram`` for a
        message that fits the encoder (``fits``) and the n-gram model alone otherwise, so the
        encoder can move each probability by at most ``w``. When the decision comes out the same at
        both ends of that range, the encoder is skipped and the row reports the n-gram
        probabilities, which give that same decision. Labels are exactly those of the full
        ensemble; only the reported scores of settled rows differ.
        """
        texts = list(texts)
        langs = [detect_language(t) for t in texts]
        q = self.ngram_probs(texts)
        if q is None:
            return self.encoder_probs(texts), langs
        w = self.ensemble_weights(langs)
        need = self.encoder_rows(texts, q, langs)
        p = q.copy()
        if need:
            p[need] = _blend(self.encoder_probs([texts[i] for i in need]), q[need], w[need])
        return p, langs

    def full_probs(self, texts: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """The same ensemble with the encoder run on every message that fits it: what ``probs``
        must agree with label for label (a test checks it), and the baseline that shows what
        skipping saves."""
        texts = list(texts)
        langs = [detect_language(t) for t in texts]
        p = self.encoder_probs(texts)
        q = self.ngram_probs(texts)
        if q is None:
            return p, langs
        w = self.ensemble_weights(langs) * np.asarray(self.fits(texts), dtype=np.float64)
        return _blend(p, q, w), langs

    def encoder_rows(self, texts: Sequence[str], q: np.ndarray, langs: Sequence[str]) -> list[int]:
        """Indices of the texts the encoder must run on: those that fit it and whose label its vote
        could still change, given n-gram probabilities ``q``. Only these are tokenized."""
        w = self.ensemble_weights(langs)
        unsettled = [i for i in range(len(langs)) if not self._settled(q[i], w[i], langs[i])]
        return [i for i, fit in zip(unsettled, self.fits([texts[i] for i in unsettled])) if fit]

    def ensemble_weights(self, langs: Sequence[str]) -> np.ndarray:
        """The encoder's weight in the ensemble for each text, by language (chosen on validation)."""
        return np.asarray([float(self.config["ensemble"][lang]["w_model"]) for lang in langs])

    def _settled(self, q: np.ndarray, w: float, lang: str) -> bool:
        """True when no encoder output could change the label that the ensemble gives this row."""
        if w <= 0.0:
            return True
        margin = 1e-9
        ci = self.labels.index("CRITICAL")
        ri, ti = self.labels.index("RELEVANT"), self.labels.index("TRIVIAL")
        t = float(self.config["decision"]["critical_threshold"][lang])
        low, high = (1.0 - w) * q[ci], (1.0 - w) * q[ci] + w
        if low >= t + margin:
            return True  # CRITICAL whatever the encoder says
        if high >= t - margin:
            return False
        # never CRITICAL: RELEVANT vs TRIVIAL must be settled too; the encoder moves their gap by at most w
        return abs((1.0 - w) * (q[ri] - q[ti])) > w + margin

    def decide(self, p: np.ndarray, langs: Sequence[str]) -> list[str]:
        rule = self.config["decision"]
        ci = self.labels.index("CRITICAL")
        out = []
        for row, lang in zip(p, langs):
            t = float(rule["critical_threshold"][lang])
            if row[ci] >= t:
                out.append("CRITICAL")
            else:
                masked = row.copy()
                masked[ci] = -1.0
                out.append(self.labels[int(masked.argmax())])
        return out

    def classify(self, texts: Sequence[str]) -> list[Classification]:
        texts = list(texts)
        if not texts:
            return []
        p, langs = self.probs(texts)
        labels = self.decide(p, langs)
        return [
            Classification(Importance(lab), {name: float(row[k]) for k, name in enumerate(self.labels)}, "model")
            for lab, row in zip(labels, p)
        ]
