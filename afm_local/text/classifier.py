"""Importance decisions in layers: the user's tag, then the trained model, then the rules that earned it.

A tag always wins (the engine applies it before any classifier runs). The model labels everything
else when it is installed, and it reads the hard-constraint rules' hits as features: the rules vote
with it rather than overrule it. Only the rule categories that, measured on real third-party dev
turns, add a true CRITICAL and no false one may still raise its label (``rule_overrides`` in the
model's ``labels.json``). Without a model the rules stand alone (``RuleClassifier``), a documented
fallback, not a classifier.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..core.protocols import ImportanceClassifier
from ..core.types import Classification, Utterance
from ..core.vocabulary import Importance
from .rules import RuleClassifier, hard_constraint_hits


class LayeredClassifier:
    """The trained model with the rule categories ``overrides`` on top; the rules alone without a model."""

    def __init__(self, model: ImportanceClassifier | None, overrides: Iterable[str] = ()) -> None:
        self._model: ImportanceClassifier = model or RuleClassifier()
        self._overrides = frozenset(overrides) if model is not None else frozenset()
        suffix = f"+rules({','.join(sorted(self._overrides))})" if self._overrides else ""
        self.name = f"{self._model.name}{suffix}" if model is not None else "rules"

    def classify(self, items: Sequence[Utterance]) -> list[Classification]:
        verdicts = self._model.classify(items)
        if not self._overrides:
            return verdicts
        out = []
        for item, verdict in zip(items, verdicts):
            if verdict.label is not Importance.CRITICAL and self._overrides & set(hard_constraint_hits(item.text)):
                verdict = Classification(Importance.CRITICAL, verdict.scores, "rule")
            out.append(verdict)
        return out
