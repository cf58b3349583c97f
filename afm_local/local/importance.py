"""The trained importance classifier at run time: onnxruntime + numpy, nothing else.

The classifier continues multilingual-e5-small where the embedder's bottom layers leave off: the
e5 graph also outputs its hidden states after ``SPLIT_LAYER`` layers (``e5_build.py``), and
``models/importance/head.onnx`` holds the top layers fine-tuned for importance, mean pooling, and a
linear head that also reads the speaker's role and the hard-constraint rules' hits (the rules vote
with the model instead of overriding it). Ingest therefore reads a message with the shared bottom
once: the embedder's pass leaves the hidden states behind for the classifier (``OnnxEmbedder.
hidden_states``).

``models/importance/`` holds ``head.onnx``, ``labels.json`` (label order, the encoder it continues,
the features, the decision threshold per role) and ``model_card.json`` (how it was trained, its metrics). Every
file is checked against its pin in ``models/manifest.json`` before anything is loaded, and the
encoder's fingerprint must be the one the head was trained on. It never imports torch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.errors import ModelError
from ..core.types import Classification, Utterance
from ..core.vocabulary import IMPORTANCE_NAMES, Importance
from ..text.rules import HARD_CONSTRAINT_PATTERNS, hard_constraint_hits
from .embedding import OnnxEmbedder
from .model_files import INSTALL_HINT, model_spec, verified_files
from .onnx import onnxruntime

MANIFEST_NAME = "importance"
ROLE_FEATURES: tuple[str, ...] = ("user", "assistant")  # system and tool messages read as neither
RULE_FEATURES: tuple[str, ...] = tuple(name for name, _ in HARD_CONSTRAINT_PATTERNS)


def features(items: Sequence[Utterance]) -> np.ndarray:
    """What the head reads beside the text: the role (one-hot) and which hard-constraint rules hit.
    One definition for training and run time."""
    out = np.zeros((len(items), len(ROLE_FEATURES) + len(RULE_FEATURES)), dtype=np.float32)
    for row, item in enumerate(items):
        if item.role in ROLE_FEATURES:
            out[row, ROLE_FEATURES.index(item.role)] = 1.0
        for name in hard_constraint_hits(item.text):
            out[row, len(ROLE_FEATURES) + RULE_FEATURES.index(name)] = 1.0
    return out


def verify_model_dir(model_dir: Path, root: Path | None = None) -> dict[str, Path]:
    """Check every file of the importance model in ``model_dir`` against its pin in the manifest (under
    ``root``); the verified paths by file name, or ``ModelError`` naming the fix."""
    return verified_files(MANIFEST_NAME, root, folder=model_dir)


class EncoderHeadClassifier:
    """CRITICAL / RELEVANT / TRIVIAL from e5's hidden states, the role and the rules (source ``"model"``).

    Each message runs on its own (no padding), so a label never depends on the other messages of a call."""

    def __init__(self, model_dir: Path, encoder: OnnxEmbedder, threads: int = 1, *, root: Path | None = None) -> None:
        ort = onnxruntime()
        self.model_dir = Path(model_dir)
        files = verify_model_dir(self.model_dir, root)
        self.card = json.loads(files["model_card.json"].read_text(encoding="utf-8"))
        self.config = json.loads(files["labels.json"].read_text(encoding="utf-8"))
        if tuple(self.config["labels"]) != IMPORTANCE_NAMES:
            raise ModelError(f"unexpected labels {self.config['labels']} in labels.json; {INSTALL_HINT}")
        wanted = self.config["encoder"]
        if encoder.name != wanted["name"] or encoder.split_output != wanted["split_output"]:
            raise ModelError(
                f"the importance model continues {wanted['name']} at {wanted['split_output']}, but the installed "
                f"encoder is {encoder.name} ({encoder.split_output}); {INSTALL_HINT}, or retrain with "
                "scripts/train_classifier.py"
            )
        if self.config["features"] != {"roles": list(ROLE_FEATURES), "rules": list(RULE_FEATURES)}:
            raise ModelError(
                "the importance model was trained on other features than this version reads; "
                "retrain it with scripts/train_classifier.py"
            )
        self._encoder = encoder
        thresholds = self.config["decision"]["critical_threshold"]
        self.thresholds = {role: float(thresholds[role]) for role in ROLE_FEATURES}
        # The name keys cached verdicts, so it changes whenever a file that decides them (the head, the labels)
        # or the encoder does; the card only documents the model.
        pins = {Path(f.path).name: f.sha256 for f in model_spec(MANIFEST_NAME, root).files}
        deciding = {name: sha for name, sha in pins.items() if name in ("head.onnx", "labels.json")}
        digest = hashlib.sha256(json.dumps([deciding, encoder.name], sort_keys=True).encode())
        self.name = f"e5-head:{self.card.get('name', 'importance')}@{digest.hexdigest()[:12]}"
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(files["head.onnx"]), options, providers=["CPUExecutionProvider"])

    @classmethod
    def available(cls, model_dir: Path, root: Path | None = None) -> bool:
        """True when every model file is present and matches its pin (hashed once per process)."""
        try:
            verify_model_dir(Path(model_dir), root)
        except (ModelError, OSError, ValueError):
            return False
        return True

    def probabilities(self, items: Sequence[Utterance]) -> np.ndarray:
        """Per-class probabilities, one row per message, columns in ``IMPORTANCE_NAMES`` order (the head's outputs)."""
        out = np.zeros((len(items), len(IMPORTANCE_NAMES)), dtype=np.float64)
        extra = features(items)
        for row, states in enumerate(self._encoder.hidden_states([item.text for item in items])):
            feed = {"hidden_states": states[None].astype(np.float32), "features": extra[row : row + 1]}
            out[row] = self._session.run(["probabilities"], feed)[0][0]
        return out

    def decide(self, p: np.ndarray, roles: Sequence[str]) -> list[Importance]:
        """CRITICAL at or above the threshold of the message's role, chosen on real dev turns (a system or tool
        message takes the user's), else the likelier of the other two."""
        return [
            Importance.CRITICAL
            if row[0] >= self.thresholds.get(role, self.thresholds["user"])
            else Importance(IMPORTANCE_NAMES[1 + int(row[1:].argmax())])
            for row, role in zip(p, roles)
        ]

    def classify(self, items: Sequence[Utterance]) -> list[Classification]:
        if not items:
            return []
        p = self.probabilities(items)
        return [
            Classification(label, {name: float(v) for name, v in zip(IMPORTANCE_NAMES, row)}, "model")
            for label, row in zip(self.decide(p, [item.role for item in items]), p)
        ]
