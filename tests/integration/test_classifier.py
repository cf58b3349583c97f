"""The trained importance classifier: real model files (e5 encoder + fine-tuned head), no mocks, 1 thread."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from afm_local.core.errors import ModelError
from afm_local.core.types import Utterance
from afm_local.core.vocabulary import Importance
from afm_local.local.embedding import OnnxEmbedder
from afm_local.local.importance import EncoderHeadClassifier
from afm_local.text.classifier import LayeredClassifier

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "models" / "importance"
DATA = ROOT / "data" / "importance"

pytestmark = pytest.mark.skipif(not EncoderHeadClassifier.available(MODEL_DIR), reason="importance model not installed")


@pytest.fixture(scope="module")
def encoder() -> OnnxEmbedder:
    return OnnxEmbedder("multilingual-e5-small", threads=1)


@pytest.fixture(scope="module")
def clf(encoder: OnnxEmbedder) -> EncoderHeadClassifier:
    return EncoderHeadClassifier(MODEL_DIR, encoder, threads=1)


CLEAR_CASES = [
    ("I'm severely allergic to peanuts, keep that in mind for everything.", "user", "CRITICAL"),
    ("I cannot stand spicy food, so nothing hot for me.", "user", "CRITICAL"),
    ("I refuse to fly, trains or buses only.", "user", "CRITICAL"),
    ("У меня аллергия на орехи, учитывайте это везде.", "user", "CRITICAL"),
    ("Бюджет строго до 300 тысяч рублей, больше не можем.", "user", "CRITICAL"),
    ("Я не ем мясо уже десять лет.", "user", "CRITICAL"),
    ("Thanks, that's all I need!", "user", "TRIVIAL"),
    ("Спасибо, до свидания!", "user", "TRIVIAL"),
    ("What time does the museum open on Sundays?", "user", "RELEVANT"),
    ("Во сколько отправляется последний поезд в Казань?", "user", "RELEVANT"),
    ("You can sort a dict by key with sorted(d.items()).", "assistant", "RELEVANT"),
    ("The Lensfield Hotel is expensive and in the south. Shall I book it?", "assistant", "RELEVANT"),
]


@pytest.mark.parametrize(("text", "role", "expected"), CLEAR_CASES)
def test_clear_cases_in_both_languages(clf: EncoderHeadClassifier, text: str, role: str, expected: str) -> None:
    (verdict,) = clf.classify([Utterance(text, role)])
    assert verdict.label.value == expected, (text, verdict.scores)
    assert verdict.source == "model" and abs(sum(verdict.scores.values()) - 1.0) < 1e-4


def test_the_role_is_read(clf: EncoderHeadClassifier) -> None:
    """Same words, another speaker: the head reads the role, so the probabilities move."""
    text = "Noted: no peanuts in any recommendation from now on."
    user, assistant = clf.probabilities([Utterance(text, "user"), Utterance(text, "assistant")])
    assert not np.allclose(user, assistant)


def test_each_role_has_its_threshold(encoder: OnnxEmbedder) -> None:
    """p(CRITICAL) is held against the threshold of the message's own role; system and tool messages take the
    user's. The thresholds come from labels.json, one per role."""
    fresh = EncoderHeadClassifier(MODEL_DIR, encoder, threads=1)
    assert set(fresh.thresholds) == {"user", "assistant"}
    fresh.thresholds = {"user": 0.3, "assistant": 0.6}
    p = np.array([[0.45, 0.5, 0.05]] * 4)
    assert fresh.decide(p, ["user", "assistant", "system", "tool"]) == [
        Importance.CRITICAL,
        Importance.RELEVANT,
        Importance.CRITICAL,
        Importance.CRITICAL,
    ]


def test_labels_do_not_depend_on_the_batch(clf: EncoderHeadClassifier) -> None:
    items = [Utterance(t, r) for t, r, _ in CLEAR_CASES]
    together = clf.probabilities(items)
    alone = np.vstack([clf.probabilities([item]) for item in items])
    assert np.allclose(together, alone, atol=1e-6)
    assert clf.classify([]) == []


# int8 kernels differ by instruction set (AVX2 without VNNI saturates where AVX-512 VNNI does not): on an
# AVX2-only EPYC 5 labels of this split differed from the recorded ones (under 1%). A real regression (a wrong
# head, encoder, threshold or rule layer) moves far more than that (docs/models.md, "Portable numbers").
AGREEMENT = 0.99  # share of the own test split's labels that must match the recorded ones
F1_TOLERANCE = 0.02  # 5 flipped labels move the macro-F1 by up to 0.012 (seeded trials, docs/models.md)
RECORDED = ROOT / "tests" / "fixtures" / "importance_own_test_labels.json"


def own_test_labels(clf: EncoderHeadClassifier) -> tuple[list[dict], list[str], str]:
    """The own test split, the labels the layered classifier gives it now, and the classifier's name."""
    rows = [json.loads(line) for line in (DATA / "test.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    layered = LayeredClassifier(clf, clf.config["rule_overrides"])
    pred = [v.label.value for v in layered.classify([Utterance(r["text"], r.get("role", "user")) for r in rows])]
    return rows, pred, layered.name


def test_agrees_with_its_metrics_file(clf: EncoderHeadClassifier) -> None:
    """The card's figures on our own test split are what the runtime classifier gives now, within what another
    instruction set changes: at least 99% of the recorded labels, the macro-F1 within 0.02."""
    from scripts.common import metrics

    card = json.loads((MODEL_DIR / "model_card.json").read_text(encoding="utf-8"))
    recorded = card["metrics"]["own_test"]["all"]
    rows, pred, name = own_test_labels(clf)
    labels = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert labels["classifier"] == name and len(labels["labels"]) == len(rows) == recorded["n"]
    agreement = float(np.mean([p[0] == r for p, r in zip(pred, labels["labels"])]))
    assert agreement >= AGREEMENT, agreement
    got = metrics([r["label"] for r in rows], pred)
    assert abs(got["macro_f1"] - recorded["macro_f1"]) <= F1_TOLERANCE, (got["macro_f1"], recorded["macro_f1"])


def test_runs_with_the_network_blocked(no_network, encoder: OnnxEmbedder) -> None:
    fresh = EncoderHeadClassifier(MODEL_DIR, encoder, threads=1)
    out = fresh.classify([Utterance("I'm allergic to peanuts.", "user"), Utterance("спасибо", "user")])
    assert [c.label for c in out] == [Importance.CRITICAL, Importance.TRIVIAL]


def test_shares_the_embedders_pass(encoder: OnnxEmbedder, clf: EncoderHeadClassifier) -> None:
    """Ingest embeds, then classifies: the classifier reads the hidden states that pass left behind."""
    text = "Please never book me anything before 10 am, I work nights."
    encoder.embed([text], "passage")
    calls = []
    run = encoder._session.run
    encoder._session.run = lambda *a, **k: calls.append(1) or run(*a, **k)  # count encoder runs
    try:
        clf.classify([Utterance(text, "user")])
    finally:
        encoder._session.run = run
    assert calls == []


def test_a_head_for_another_encoder_is_refused(tmp_path: Path) -> None:
    minilm = OnnxEmbedder("minilm-l6-v2", threads=1)
    with pytest.raises(ModelError, match="continues multilingual-e5-small"):
        EncoderHeadClassifier(MODEL_DIR, minilm)


def test_tampered_or_missing_files_raise_with_install_hint(tmp_path: Path, encoder: OnnxEmbedder) -> None:
    bad = tmp_path / "importance"
    shutil.copytree(MODEL_DIR, bad)
    labels = bad / "labels.json"
    labels.write_text(labels.read_text() + " ")
    assert not EncoderHeadClassifier.available(bad)
    with pytest.raises(ModelError, match="afm-local models install"):
        EncoderHeadClassifier(bad, encoder)
    (bad / "head.onnx").unlink()
    with pytest.raises(ModelError, match="afm-local models install"):
        EncoderHeadClassifier(bad, encoder)
    with pytest.raises(ModelError, match="afm-local models install"):
        EncoderHeadClassifier(tmp_path / "nothing-here", encoder)


def test_runtime_imports_no_torch() -> None:
    code = (
        "import sys; from afm_local.local.components import local_classifier; "
        "from afm_local.core.types import Utterance; "
        "local_classifier().classify([Utterance('hello')]); "
        "bad = [m for m in ('torch', 'transformers', 'sklearn') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def test_loads_quickly_and_files_within_budget(encoder: OnnxEmbedder) -> None:
    t = time.perf_counter()
    EncoderHeadClassifier(MODEL_DIR, encoder)
    assert time.perf_counter() - t < 1.5
    head = sum(p.stat().st_size for p in MODEL_DIR.iterdir() if p.is_file())
    e5 = sum(p.stat().st_size for p in (MODEL_DIR.parent / "multilingual-e5-small").iterdir() if p.is_file())
    assert head + e5 <= 150 * 1024 * 1024, (head, e5)


if __name__ == "__main__":  # re-record the labels after the classifier changes (docs/models.md)
    encoder = OnnxEmbedder("multilingual-e5-small", threads=1)
    _, pred, name = own_test_labels(EncoderHeadClassifier(MODEL_DIR, encoder, threads=1))
    RECORDED.write_text(json.dumps({"classifier": name, "labels": "".join(p[0] for p in pred)}) + "\n")
