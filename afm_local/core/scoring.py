"""Scoring and intended fidelity, exactly as the AFM paper states them.

Pure arithmetic on arrays: the manager supplies similarities and importance classes, this module
turns them into scores and intended fidelities. Nothing here touches a model.
"""

from __future__ import annotations

import numpy as np

from .config import AFMConfig
from .vocabulary import COMPRESSED, CRITICAL, FULL, PLACEHOLDER, RELEVANT


def messages_ago(n_history: int) -> np.ndarray:
    """Age of each history message, counted from the current query.

    The query itself is 0 messages ago, so the newest history message is 1 and the oldest
    ``n_history``.
    """
    return np.arange(n_history, 0, -1, dtype=np.float64)


def recency_weight(ages: np.ndarray, half_life: float) -> np.ndarray:
    """``w = 0.5 ** (messages_ago / half_life)``."""
    return np.power(0.5, ages / half_life)


def score_messages(classes: np.ndarray, similarity: np.ndarray, recency: np.ndarray, config: AFMConfig) -> np.ndarray:
    """Score each message: CRITICAL is fixed, RELEVANT and TRIVIAL scale clipped similarity by recency.

    ``classes`` holds importance codes (``types.CRITICAL`` ...). With ``config.similarity_floor`` set,
    a RELEVANT message whose clipped similarity reaches it uses ``w = 1`` instead of its decayed
    weight: in a long chat, old relevance is still relevance. TRIVIAL is unchanged.
    """
    sim = np.maximum(similarity.astype(np.float64), 0.0)
    relevant_w = recency
    if config.similarity_floor is not None:
        relevant_w = np.where(sim >= config.similarity_floor, 1.0, recency)
    relevant = sim * (config.relevant_base + config.relevant_recency * relevant_w)
    trivial = sim * config.trivial_scale * recency
    scores = np.where(classes == RELEVANT, relevant, trivial)
    return np.where(classes == CRITICAL, config.critical_score, scores)


def intended_fidelities(scores: np.ndarray, classes: np.ndarray, config: AFMConfig) -> np.ndarray:
    """The fidelity each message should take if the budget allows (fidelity codes); CRITICAL is always Full."""
    fidelities = np.where(scores >= config.compressed_threshold, COMPRESSED, PLACEHOLDER)
    fidelities = np.where((scores >= config.full_threshold) | (classes == CRITICAL), FULL, fidelities)
    return fidelities.astype(np.int8)
