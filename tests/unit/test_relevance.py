"""The default scoring's pure parts: context, calibration, best sentences, and BM25 against a reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from afm_local.core.config import AFMConfig
from afm_local.core.lexical import Bm25Index
from afm_local.core.relevance import (
    best_sentences,
    contextual,
    demotion_order,
    excerpt_costs,
    relevance_scores,
    relevance_z,
    standardized,
)
from afm_local.core.vocabulary import CRITICAL, RELEVANT, TRIVIAL
from afm_local.text.terms import terms

sims = st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=40).map(np.array)


def test_an_answer_inherits_the_relevance_of_its_question() -> None:
    sim = np.array([0.1, 0.9, 0.2, 0.1])  # message 1 is the question, message 2 its short answer
    near = contextual(sim, 0.3, 0.3)
    assert near[2] > near[3] and near[2] > near[0]
    assert near[1] == pytest.approx(0.9 + 0.3 * 0.1 + 0.3 * 0.2)


@given(sims)
def test_context_without_weights_is_the_similarity(sim: np.ndarray) -> None:
    assert np.allclose(contextual(sim, 0.0, 0.0), sim)


@given(sims, st.floats(0.01, 5), st.floats(-3, 3))
def test_standardized_is_scale_free(x: np.ndarray, scale: float, shift: float) -> None:
    """Any embedder's band of cosines calibrates to the same scores: the thresholds mean the same (for cosines
    that differ at all: a spread of 1e-9, [0, 1e-9], drowns in the rounding of the shift)."""
    assume(np.ptp(x) > 1e-6)
    assert np.allclose(standardized(x), standardized(x * scale + shift), atol=1e-6)


def test_a_flat_signal_stands_out_nowhere() -> None:
    assert not standardized(np.full(5, 0.8)).any()


def test_best_sentences_picks_the_first_best_of_each_message() -> None:
    sentence_sims = np.array([0.2, 0.7, 0.7, 0.5, 0.1, 0.9])
    owners = np.array([0, 0, 0, 1, 2, 2])
    best, value = best_sentences(sentence_sims, np.array([0, 3, 4]), owners)
    assert best.tolist() == [1, 3, 5]
    assert value.tolist() == [0.7, 0.5, 0.9]


def test_scores_keep_relevance_order_and_critical_on_top() -> None:
    cfg = AFMConfig()
    classes = np.array([RELEVANT, RELEVANT, TRIVIAL, CRITICAL, RELEVANT])
    dense = np.array([0.80, 0.95, 0.97, 0.10, 0.70])
    scores = relevance_scores(classes, relevance_z(dense, dense, np.zeros(5), np.zeros(5), cfg), cfg)
    assert scores[3] == cfg.critical_score
    assert scores[1] > scores[0] > scores[4]
    assert 0 < scores.min() and scores[:3].max() < 1


def test_trivial_never_falls_below_unrelated_messages() -> None:
    """A TRIVIAL message that is the most similar of the history stays above the unrelated ones."""
    cfg = AFMConfig()
    dense = np.r_[0.95, np.full(30, 0.75) + np.linspace(0, 0.02, 30)]
    classes = np.r_[TRIVIAL, np.full(30, RELEVANT)]
    scores = relevance_scores(classes, relevance_z(dense, dense, np.zeros(31), np.zeros(31), cfg), cfg)
    assert scores[0] == scores.max()


def test_an_excerpt_is_a_units_cost_only_when_it_saves_enough() -> None:
    starts = np.array([0, 1, 3])  # message 0: one sentence; 1: two; 2: two, the best one nearly all of it
    sentence_tokens = np.array([10, 4, 20, 19, 1])
    full = np.array([10, 24, 20])
    assert excerpt_costs(np.array([0, 1, 3]), starts, sentence_tokens, full).tolist() == [10, 4, 20]
    # message 1's excerpt saves 20 tokens: kept at a minimum saving of 20, not at 21 (sent whole instead)
    assert excerpt_costs(np.array([0, 1, 3]), starts, sentence_tokens, full, 20).tolist() == [10, 4, 20]
    assert excerpt_costs(np.array([0, 1, 3]), starts, sentence_tokens, full, 21).tolist() == [10, 24, 20]


def test_terms_stem_english_and_russian_and_drop_stop_words() -> None:
    assert terms("I was researching adoption agencies") == terms("research adoption agency")
    assert terms("У меня аллергия на орехи") == ["аллерг", "орех"]
    assert "the" not in terms("the 14th of June")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8), min_size=1, max_size=25),
    st.lists(st.sampled_from("abcdefghz"), min_size=1, max_size=4),
)
def test_bm25_matches_bm25s(docs: list[list[str]], query: list[str]) -> None:
    bm25s = pytest.importorskip("bm25s")
    index = Bm25Index()
    for doc in docs:
        index.add(doc)
    reference = bm25s.BM25(method="lucene", k1=index.k1, b=index.b)
    vocab = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
    reference.index(
        bm25s.tokenization.Tokenized(ids=[[vocab[t] for t in d] for d in docs], vocab=vocab), show_progress=False
    )
    known = [t for t in dict.fromkeys(query) if t in vocab]
    expected = reference.get_scores(known) if known else np.zeros(len(docs))
    assert np.allclose(index.scores(query), expected, atol=1e-5)


def test_bm25_scores_a_prefix_as_if_the_rest_were_not_there() -> None:
    """A snapshot of the first n messages is scored as that history alone, while later ones are appended."""
    docs = [["cat", "dog"], ["dog"], ["fish", "cat"], ["cat", "cat", "bird"]]
    whole, prefix = Bm25Index(), Bm25Index()
    for doc in docs:
        whole.add(doc)
    for doc in docs[:2]:
        prefix.add(doc)
    assert np.allclose(whole.scores(["cat", "dog"], n=2), prefix.scores(["cat", "dog"]))


def test_runs_are_the_maximal_stretches_not_sent() -> None:
    from afm_local.core.ranges import runs

    sent = np.array([False, False, True, False, True, True, False, False, False])
    assert runs(sent) == [(0, 2), (3, 4), (6, 9)]
    assert runs(np.ones(3, dtype=bool)) == []


def test_the_most_relevant_runs_get_their_line_while_lines_fit() -> None:
    from afm_local.core.ranges import choose

    candidates = [(0, 2), (3, 4), (6, 9)]
    score = np.array([0.1, 0.2, 1.0, 0.9, 1.0, 1.0, 0.3, 0.5, 0.4])
    priced = []

    def cost(a: int, b: int) -> int:
        priced.append((a, b))
        return 10

    assert choose(candidates, score, cost, 25) == [(3, 4), (6, 9)]  # best score first: 0.9, 0.5; no room for 0.2
    assert priced == [(3, 4), (6, 9), (0, 2)]
    assert choose(candidates, score, cost, 5, min_spare=6) == []  # less than the cheapest line: nothing is priced


def test_demotion_weighs_certainty_and_relevance() -> None:
    z = np.array([2.0, -1.0, 0.5, -1.0, 3.0])
    confidence = np.array([0.9, 0.9, 0.9, 0.99, 0.6])
    key = demotion_order(z, confidence)
    assert key[1] < key[2] < key[0]  # equally certain: the least relevant gives way first
    assert key[3] > key[1]  # equally relevant: the least certain first
    assert key[4] < key[0]  # a relevant but doubtful taste before a certain, relevant constraint
