"""The default scoring: how much each history message matters to the query, calibrated per history.

Pure arithmetic on arrays (docs/configuration.md says why each step is there, with the dev-set figures):

1. **dense**: a message's cosine to the query, or its best sentence's (a sentence or list item, embedded in
   the same pass) when that is higher: one relevant sentence in a long answer counts;
2. **context**: plus ``context_before`` times its predecessor's and ``context_after`` times its
   successor's: an answer ("Horror, mostly.") inherits the relevance of the question it answers;
3. **calibrated**: as z-scores within this history (how many standard deviations above the history's
   mean), so a threshold means the same for every embedder and every history, whatever band the
   embedder's cosines sit in; plus ``lexical_weight`` times the z-score of the lexical ranking (BM25);
4. a mild **recency prior** (``recency_prior`` z-sentences for the newest message, halving every
   ``half_life`` messages) and a **TRIVIAL penalty** (``trivial_penalty`` z-sentences): priors and tie
   breakers, never a multiplier that erases relevance;
5. the **score** is ``sigmoid(z)``: 0.5 for a message of average relevance, 0.95 about three standard
   deviations above it. CRITICAL messages score ``critical_score``.

A message's **excerpt** (its compressed form under ``compressed_form="excerpt"``) is its sentence most similar
to the query, verbatim.
"""

from __future__ import annotations

import numpy as np

from .config import AFMConfig
from .vocabulary import CRITICAL, TRIVIAL

EXCERPT_SHARE = 0.85  # an excerpt must save 15% of a message's tokens, as a summary must (text.extractive)


def contextual(sim: np.ndarray, before: float, after: float) -> np.ndarray:
    """Each message's similarity plus its neighbours', weighted; an end message counts itself as the
    missing neighbour, so it is neither helped nor hurt by its place."""
    if not len(sim):
        return sim.astype(np.float64)
    prev = np.concatenate([sim[:1], sim[:-1]])
    succ = np.concatenate([sim[1:], sim[-1:]])
    return sim + before * prev + after * succ


def standardized(x: np.ndarray) -> np.ndarray:
    """z-scores; all zeros when every value is the same (nothing stands out)."""
    x = x.astype(np.float64)
    sd = float(x.std()) if len(x) else 0.0
    return (x - x.mean()) / sd if sd > 1e-12 else np.zeros_like(x)


def best_sentences(sentence_sims: np.ndarray, starts: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per message, the index of its most similar sentence (first on ties) and that similarity.

    ``starts``: where each message's sentences begin in ``sentence_sims`` (every message has one or more);
    ``owners``: the message of each sentence."""
    if not len(starts):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    best = np.maximum.reduceat(sentence_sims, starts)
    hits = np.flatnonzero(sentence_sims >= best[owners])
    first = np.concatenate([[True], owners[hits][1:] != owners[hits][:-1]])
    return hits[first], best.astype(np.float64)


def relevance_z(
    dense: np.ndarray, sentence_best: np.ndarray, lexical: np.ndarray, recency: np.ndarray, config: AFMConfig
) -> np.ndarray:
    """Steps 1–4 but the class prior: how far above the history's mean each message stands (z-sentences);
    ``recency`` is ``w`` per message."""
    near = contextual(np.maximum(dense, sentence_best), config.context_before, config.context_after)
    z = standardized(near) + config.lexical_weight * standardized(lexical)
    return z + config.recency_prior * recency


def relevance_scores(classes: np.ndarray, z: np.ndarray, config: AFMConfig) -> np.ndarray:
    """The default score of every message: ``sigmoid(z)`` after the TRIVIAL penalty; CRITICAL fixed."""
    z = z - config.trivial_penalty * (classes == TRIVIAL)
    return np.where(classes == CRITICAL, config.critical_score, 1.0 / (1.0 + np.exp(-z)))


def excerpt_costs(
    sentence_best: np.ndarray,
    starts: np.ndarray,
    sentence_tokens: np.ndarray,
    full_tokens: np.ndarray,
    min_saving: int = 0,
) -> np.ndarray:
    """Per message, the token cost of its query-aware excerpt (its best sentence alone), or its full cost when it
    has one sentence or the excerpt would save less than ``1 - EXCERPT_SHARE`` of it or fewer than ``min_saving``
    tokens (then there is no excerpt: a short message is not cut for a few tokens)."""
    counts = np.diff(np.concatenate([starts, [len(sentence_tokens)]]))
    cost = sentence_tokens[sentence_best]
    worth = (counts > 1) & (cost < EXCERPT_SHARE * full_tokens) & (full_tokens - cost >= min_saving)
    return np.where(worth, cost, full_tokens)


DEMOTION_RELEVANCE = 0.5  # z-units of relevance worth one logit of the classifier's certainty (dev: 0.25, 0.5, 1)


def demotion_order(z: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """``demote="relevance"``: the key by which model-labelled CRITICAL messages leave an overfull reservation,
    lowest first: the classifier's certainty (as a logit) plus ``DEMOTION_RELEVANCE`` times the message's
    relevance to the query (``relevance_z``), so that of two equally certain CRITICALs the one unrelated to the
    question gives way first, while a certain constraint outlasts a relevant but doubtful taste."""
    p = np.clip(confidence.astype(np.float64), 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p)) + DEMOTION_RELEVANCE * z
