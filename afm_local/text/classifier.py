"""Importance decisions, in layers: the user's tag, then the trained model, then the rule safety net.

A tag always wins. The model (``OnnxImportanceClassifier``) labels everything else when it is
installed; the hard-constraint rules can only raise its label to CRITICAL, never lower it. Without a
model the rules stand alone (``RuleClassifier``), which is a documented fallback, not a classifier.
"""

from __future__ import annotations

from typing import Sequence

from ..core.protocols import ImportanceClassifier
from .rules import RuleClassifier, hard_constraint_hits
from ..core.types import Classification, Importance


class LayeredClassifier:
    """The trained model (or the rules alone) with the hard-constraint rules layered on top."""

    def __init__(self, model: ImportanceClassifier | None) -> None:
        self._model: ImportanceClassifier = model or RuleClassifier()
        self.name = f"{self._model.name}+rules" if model is not None else "rules"

    def classify(self, texts: Sequence[str]) -> list[Classification]:
        out = []
        for text, verdict in zip(texts, self._model.classify(texts)):
            if verdict.label is not Importance.CRITICAL and hard_constraint_hits(text):
                verdict = Classification(Importance.CRITICAL, verdict.scores, "rule")
            out.append(verdict)
        return out
