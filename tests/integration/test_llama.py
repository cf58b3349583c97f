"""The llama.cpp compressor, the summary guard and the guarded compressor, on real models.

Model files come from ``afm-local models install``; a test is skipped (with the command
that fixes it) only when its file is not installed. No mocks: the GGUF model really runs, on one
thread (n_threads = n_threads_batch = 1).
"""

from __future__ import annotations

import pytest

from afm_local.text import facts
from afm_local.text.extractive import ExtractiveCompressor
from afm_local.text.guarded import GuardedCompressor
from tests.support.real import FIX, installed

MODEL = "qwen2.5-coder-0.5b-instruct"

BUDGET_RU = (
    "Мы с женой хотим открыть магазин на маркетплейсе. Бюджет строго не более 300 000 рублей, и кредит "
    "мы брать не будем. Продавать планируем детскую одежду из хлопка от поставщика из Иваново."
)
ALLERGY_EN = (
    "Important: my son has a severe peanut allergy and carries an EpiPen. Any restaurant we book in "
    "Bangkok must not cook with peanut oil, and please never suggest street food stalls for him. "
    "We land on 12 March and stay 9 nights."
)


@pytest.fixture(scope="module")
def llama():
    if not installed(MODEL):
        pytest.skip(f"GGUF model {MODEL} not installed; run `{FIX} {MODEL}`")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'afm-local[llm]')")
    from afm_local.local.llama import LlamaCppCompressor

    return LlamaCppCompressor.from_manifest(MODEL, threads=1)


# -- the model itself ------------------------------------------------------------------------------


@pytest.mark.slow
def test_llama_compresses_to_one_shorter_line(llama, counter):
    out = llama.compress(ALLERGY_EN, 0.35)
    assert out.method == f"llama:{MODEL}"
    assert out.text.strip()
    assert "\n" not in out.text
    assert counter.count(out.text) < counter.count(ALLERGY_EN)


@pytest.mark.slow
def test_llama_topic_has_three_to_six_words(llama):
    label = llama.topic(BUDGET_RU)
    assert 3 <= len(label.split()) <= 6, label
    assert "\n" not in label


# -- the guard (real embedder and token counter) ---------------------------------------------------


GOOD_EN = (
    "My son has a severe peanut allergy and carries an EpiPen. Restaurants in Bangkok must not cook with peanut "
    "oil, and never suggest street food stalls for him. We land on 12 March for 9 nights."
)
GOOD_RU = (
    "Мы хотим открыть магазин на маркетплейсе: бюджет строго не более 300 тысяч рублей, кредит брать не будем; "
    "одежда из хлопка от поставщика из Иваново."
)


def test_guard_rejects_a_copy_and_a_cut_copy(guard, counter):
    verdict = guard.check(BUDGET_RU, BUDGET_RU, counter.count(BUDGET_RU))
    assert not verdict.accepted and verdict.reason == "not shorter"
    # A truncated prefix (what a small model does at its token cap) is cut off.
    prefix = " ".join(ALLERGY_EN.split()[:14])
    verdict = guard.check(ALLERGY_EN, prefix, counter.count(ALLERGY_EN))
    assert not verdict.accepted and verdict.reason == "cut off"


def test_guard_rejects_a_summary_that_drops_a_number(guard, counter):
    target = round(counter.count(ALLERGY_EN) * 0.8)
    bad = GOOD_EN.replace(" for 9 nights", "")
    verdict = guard.check(ALLERGY_EN, bad, target)
    assert not verdict.accepted
    assert verdict.reason == "dropped number" and verdict.details["missing"] == "9"
    bad_ru = GOOD_RU.replace("300 тысяч", "30 тысяч")
    verdict = guard.check(BUDGET_RU, bad_ru, round(counter.count(BUDGET_RU) * 0.9))
    assert not verdict.accepted and verdict.reason == "dropped number"


def test_guard_accepts_a_faithful_summary(guard, counter):
    verdict = guard.check(ALLERGY_EN, GOOD_EN, round(counter.count(ALLERGY_EN) * 0.8))
    assert verdict.accepted, verdict
    # "300 тысяч" is the same number as "300 000".
    verdict = guard.check(BUDGET_RU, GOOD_RU, round(counter.count(BUDGET_RU) * 0.9))
    assert verdict.accepted, verdict


def test_guard_rejects_telegraphic_and_negation_free_summaries(guard, counter):
    target = round(counter.count(ALLERGY_EN) * 0.8)
    flipped = GOOD_EN.replace("must not cook", "cook").replace("and never suggest", "and suggest")
    verdict = guard.check(ALLERGY_EN, flipped, target)
    assert not verdict.accepted and verdict.reason == "dropped negation"
    telegraphic = GOOD_EN.replace("We land on 12 March for 9 nights.", "Land 12 March, stay 9 nights.")
    assert guard.check(ALLERGY_EN, telegraphic, target).reason == "words dropped"
    verdict = guard.check(ALLERGY_EN, GOOD_EN, 5)
    assert not verdict.accepted and verdict.reason == "too long"
    # length_policy="fallback" raises the limit to the fallback's length.
    assert guard.check(ALLERGY_EN, GOOD_EN, 5, limit_tokens=counter.count(GOOD_EN)).accepted


def test_numbers_are_normalised():
    def forms(text: str) -> frozenset[str]:
        return facts.numbers(text)[0].forms

    assert forms("300,000") == forms("300 000") == forms("300000")
    assert forms("300k") & forms("300 000")
    assert forms("1,2 млн") & forms("1 200 000")
    assert forms("1,500 requests") == forms("1500 requests")


# -- the guarded compressor ------------------------------------------------------------------------


def test_guarded_falls_back_when_the_model_file_is_absent(guard, counter, tmp_path):
    from afm_local.local.llama import LlamaCppCompressor

    missing = tmp_path / "no-such-model.gguf"
    extractive = ExtractiveCompressor(counter)
    guarded = GuardedCompressor(lambda: LlamaCppCompressor(missing, name="absent"), extractive, guard)
    out = guarded.compress(ALLERGY_EN, 0.35)
    assert out.method == f"{ExtractiveCompressor.name}(guard:model unavailable)"
    assert out.text == extractive.compress(ALLERGY_EN, 0.35).text
    assert guarded.counts == {"rejected:model unavailable": 1}
    assert "missing" in (guarded.primary_error or "") and "install" in guarded.primary_error
    label, method = guarded.topic_with_method(ALLERGY_EN)
    assert label and method == "keyphrase(guard:model unavailable)"
    assert guarded.stats()["topic"] == {"rejected:model unavailable": 1}


@pytest.mark.slow
def test_guarded_real_model_is_checked_or_extractive(llama, guard, counter):
    extractive = ExtractiveCompressor(counter)
    guarded = GuardedCompressor(llama, extractive, guard)
    for text in (ALLERGY_EN, BUDGET_RU):
        out = guarded.compress(text, 0.35)
        target = round(counter.count(text) * 0.35)
        if out.method.startswith("llama:"):
            assert guard.check(text, out.text, target).accepted, out
        else:
            assert out.method.startswith(f"{ExtractiveCompressor.name}(guard:"), out.method
            assert out.text == extractive.compress(text, 0.35).text
            reason = out.method[len(f"{ExtractiveCompressor.name}(guard:") : -1]
            assert guarded.counts.get(f"rejected:{reason}", 0) >= 1
    assert sum(guarded.counts.values()) == 2
