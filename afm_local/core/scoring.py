"""Scoring and intended fidelity, exactly as the AFM paper states them.

Pure arithmetic on arrays: the manager supplies similarities and importance classes, this module
turns them into scores and intended forms. Nothing here touches a model.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .config import AFMConfig
from .types import Fidelity, Importance


def messages_ago(n_history: int) -> np.ndarray:
    """Age of each history message, counted from the current query.

    The query itself is 0 messages ago, so the newest history message is 1 and the oldest
    ``n_history``.
    """
    return np.arange(n_history, 0, -1, dtype=np.float64)


def recency_weight(ages: np.ndarray, half_life: float) -> np.ndarray:
    """``w = 0.5 ** (messages_ago / half_life)``."""
    return np.power(0.5, ages / half_life)


def score_messages(
    importance: Sequence[Importance],
    similarity: np.ndarray,
    recency: np.ndarray,
    config: AFMConfig,
) -> np.ndarray:
    """Score each message: CRITICAL is fixed, RELEVANT and TRIVIAL scale clipped similarity by recency.

    With ``config.similarity_floor`` set (default ``None``), a RELEVANT message whose clipped
    similarity reaches the floor uses ``w = 1`` instead of its decayed weight; TRIVIAL is unchanged.
    """
    sim = np.maximum(similarity.astype(np.float64), 0.0)
    classes = np.array([imp.value for imp in importance], dtype=object)
    relevant_w = recency
    if config.similarity_floor is not None:  # long-conversation remedy: no decay for clearly similar RELEVANT
        relevant_w = np.where(sim >= config.similarity_floor, 1.0, recency)
    relevant = sim * (config.relevant_base + config.relevant_recency * relevant_w)
    trivial = sim * config.trivial_scale * recency
    scores = np.where(classes == Importance.RELEVANT.value, relevant, trivial)
    return np.where(classes == Importance.CRITICAL.value, config.critical_score, scores)


def intended_fidelity(score: float, importance: Importance, config: AFMConfig) -> Fidelity:
    """Map a score to the form the message should take if the budget allows; CRITICAL is always Full."""
    if importance is Importance.CRITICAL or score >= config.full_threshold:
        return Fidelity.FULL
    if score >= config.compressed_threshold:
        return Fidelity.COMPRESSED
    return Fidelity.PLACEHOLDER
