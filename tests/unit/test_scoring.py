"""The paper's formulas and thresholds, exactly, including configured coefficients."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from afm_local import AFMConfig, Fidelity
from afm_local.core.scoring import intended_fidelities, messages_ago, recency_weight, score_messages
from afm_local.core.vocabulary import CRITICAL as C
from afm_local.core.vocabulary import FIDELITIES
from afm_local.core.vocabulary import RELEVANT as R
from afm_local.core.vocabulary import TRIVIAL as T


def test_age_counts_from_the_query():
    assert messages_ago(4).tolist() == [4, 3, 2, 1]


def test_recency_weight_halves_every_half_life():
    w = recency_weight(np.array([0.0, 12.0, 24.0, 6.0]), half_life=12)
    assert w == pytest.approx([1.0, 0.5, 0.25, 0.5**0.5])


def test_scores_follow_the_paper():
    cfg = AFMConfig.paper()
    sim = np.array([0.3, 0.8, 0.8, -0.5, -0.5])
    w = np.array([0.25, 0.5, 0.5, 1.0, 1.0])
    scores = score_messages(np.array([C, R, T, R, T]), sim, w, cfg)
    assert scores == pytest.approx([1.0, 0.8 * (0.4 + 0.4 * 0.5), 0.8 * 0.25 * 0.5, 0.0, 0.0])


def test_coefficients_are_configurable():
    cfg = AFMConfig.paper(critical_score=0.9, relevant_base=0.2, relevant_recency=0.6, trivial_scale=0.5)
    scores = score_messages(np.array([C, R, T]), np.array([0.5, 0.5, 0.5]), np.array([1.0, 0.5, 0.5]), cfg)
    assert scores == pytest.approx([0.9, 0.5 * (0.2 + 0.6 * 0.5), 0.5 * 0.5 * 0.5])


@pytest.mark.parametrize(
    ("score", "importance", "expected"),
    [
        (0.45, R, Fidelity.FULL),
        (0.4499, R, Fidelity.COMPRESSED),
        (0.25, R, Fidelity.COMPRESSED),
        (0.2499, T, Fidelity.PLACEHOLDER),
        (0.0, C, Fidelity.FULL),
    ],
)
def test_thresholds(score, importance, expected):
    assert FIDELITIES[intended_fidelities(np.array([score]), np.array([importance]), AFMConfig.paper())[0]] is expected


def test_config_rejects_bad_values():
    with pytest.raises(ValidationError, match="half_life"):
        AFMConfig(half_life=0)
    with pytest.raises(ValidationError, match="compressed_threshold"):
        AFMConfig(full_threshold=0.2, compressed_threshold=0.3)
    with pytest.raises(ValidationError):
        AFMConfig(unknown_field=1)


def test_similarity_floor_lifts_decay_for_relevant_only():
    cfg = AFMConfig(similarity_floor=0.4)
    sim = np.array([0.5, 0.5, 0.3])
    w = np.array([0.01, 0.01, 0.01])
    scores = score_messages(np.array([R, T, R]), sim, w, cfg)
    assert scores == pytest.approx([0.5 * (0.4 + 0.4 * 1.0), 0.5 * 0.25 * 0.01, 0.3 * (0.4 + 0.4 * 0.01)])
