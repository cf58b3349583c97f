"""The llama.cpp compressor, the summary guard and the guarded compressor, on real models.

Model files come from ``afm-local models install``; a test is skipped (with the command
that fixes it) only when its file is not installed. No mocks: the GGUF model really runs, on one
thread (n_threads = n_threads_batch = 1).
"""

from __future__ import annotations

import pytest

from afm_local.local import model_files as models
from afm_local.text.compression import ExtractiveCompressor
from afm_local.text.guard import GuardedCompressor, SummaryGuard, number_forms

MODEL = "qwen2.5-coder-0.5b-instruct"
FIX = "afm-local models install"

BUDGET_RU = (
    "Мы с женой хотим открыть магазин на маркетплейсе. Бюджет строго не более 300 000 рублей, и кредит "
    "мы брать не будем. Продавать планируем детскую одежду из хлопка от поставщика из Иваново."
)
ALLERGY_EN = (
    "Important: my son has a severe peanut allergy and carries an EpiPen. Any restaurant we book in "
    "Bangkok must not cook with peanut oil, and please never suggest street food stalls for him. "
    "We land on 12 March and stay 9 nights."
)


def _installed(name: str) -> bool:
    return all(s.state == "ok" for s in models.verify(names=[name])) and bool(models.verify(names=[name]))


@pytest.fixture(scope="module")
def counter():
    if not _installed("tiktoken"):
        pytest.skip(f"tiktoken vocabulary not installed; run `{FIX}`")
    from afm_local.local.tokens import TiktokenCounter

    return TiktokenCounter()


@pytest.fixture(scope="module")
def embedder():
    if not _installed("embedder"):
        pytest.skip(f"MiniLM embedder not installed; run `{FIX}`")
    from afm_local.local.embedding import OnnxEmbedder

    return OnnxEmbedder(threads=1)


@pytest.fixture(scope="module")
def guard(embedder, counter):
    return SummaryGuard(embedder, counter)


@pytest.fixture(scope="module")
def llama():
    if not _installed(MODEL):
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


def test_guard_rejects_a_copy_of_the_input(guard, counter):
    generous = counter.count(BUDGET_RU)  # so the length check cannot be what rejects it
    verdict = guard.check(BUDGET_RU, BUDGET_RU, generous)
    assert not verdict.accepted and verdict.reason == "copy of input"
    # A truncated prefix (what a small model does at its token cap) is a copy too.
    prefix = " ".join(ALLERGY_EN.split()[:14])
    verdict = guard.check(ALLERGY_EN, prefix, counter.count(ALLERGY_EN))
    assert not verdict.accepted and verdict.reason == "copy of input"


def test_guard_rejects_a_summary_that_drops_a_number(guard, counter):
    target = round(counter.count(ALLERGY_EN) * 0.8)
    bad = "Son has severe peanut allergy, carries EpiPen: Bangkok restaurants must not use peanut oil, never street food; land 12 March."
    verdict = guard.check(ALLERGY_EN, bad, target)
    assert not verdict.accepted
    assert verdict.reason == "dropped number" and verdict.details["missing"] == ["9"]
    bad_ru = "Магазин на маркетплейсе с женой, бюджет строго не более 30 000 рублей, кредит не будем, детская одежда из Иваново."
    verdict = guard.check(BUDGET_RU, bad_ru, round(counter.count(BUDGET_RU) * 0.8))
    assert not verdict.accepted and verdict.reason == "dropped number"


def test_guard_accepts_a_faithful_summary(guard, counter):
    good = "Son has severe peanut allergy, carries EpiPen: Bangkok restaurants must not use peanut oil, never street food; land 12 March, 9 nights."
    verdict = guard.check(ALLERGY_EN, good, round(counter.count(ALLERGY_EN) * 0.8))
    assert verdict.accepted, verdict
    # "300 тысяч" is the same number as "300 000".
    good_ru = "Магазин на маркетплейсе: бюджет строго не более 300 тысяч рублей, кредит брать не будем; детская одежда из хлопка от поставщика из Иваново."
    verdict = guard.check(BUDGET_RU, good_ru, round(counter.count(BUDGET_RU) * 0.9))
    assert verdict.accepted, verdict


def test_guard_rejects_dropped_negation_and_overlong(guard, counter):
    flipped = "Son has severe peanut allergy, carries EpiPen: Bangkok restaurants cook with peanut oil, street food fine; land 12 March, 9 nights."
    verdict = guard.check(ALLERGY_EN, flipped, round(counter.count(ALLERGY_EN) * 0.8))
    assert not verdict.accepted and verdict.reason == "dropped negation"
    good = "Son has severe peanut allergy, carries EpiPen: Bangkok restaurants must not use peanut oil, never street food; land 12 March, 9 nights."
    verdict = guard.check(ALLERGY_EN, good, 5)
    assert not verdict.accepted and verdict.reason == "too long"
    # length_policy="fallback" raises the limit to the fallback's length.
    assert guard.check(ALLERGY_EN, good, 5, limit_tokens=counter.count(good)).accepted


def test_numbers_are_normalised():
    assert number_forms("300,000") == number_forms("300 000") == number_forms("300000")
    assert number_forms("300k")[0] & number_forms("300 000")[0]
    assert number_forms("1,2 млн")[0] & number_forms("1 200 000")[0]
    assert number_forms("1,500 requests") == number_forms("1500 requests")


# -- the guarded compressor ------------------------------------------------------------------------


def test_guarded_falls_back_when_the_model_file_is_absent(guard, counter, tmp_path):
    from afm_local.local.llama import LlamaCppCompressor

    missing = tmp_path / "no-such-model.gguf"
    extractive = ExtractiveCompressor(counter)
    guarded = GuardedCompressor(lambda: LlamaCppCompressor(missing, name="absent"), extractive, guard)
    out = guarded.compress(ALLERGY_EN, 0.35)
    assert out.method == "extractive(guard:model unavailable)"
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
            assert out.method.startswith("extractive(guard:"), out.method
            assert out.text == extractive.compress(text, 0.35).text
            reason = out.method[len("extractive(guard:"):-1]
            assert guarded.counts.get(f"rejected:{reason}", 0) >= 1
    assert sum(guarded.counts.values()) == 2
