"""The background GGUF model is opt-in (none by default); when named it never blocks packing, and its
guarded results replace the extractive forms once ready. Uses the real GGUF model from the models script."""

from __future__ import annotations

import time

import pytest

from afm_local import AFMConfig, FocusManager, local_components, local_manager
from afm_local.local.paths import models_dir
from afm_local.text.extractive import ExtractiveCompressor

MODEL = "qwen2.5-coder-0.5b-instruct"  # opt-in by name: the default loads no model (see the compression benchmark)
GGUF = models_dir() / "gguf" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
needs_model = pytest.mark.skipif(not GGUF.is_file(), reason="GGUF compressor not installed (afm-local models install)")

LONG = [
    f"[RELEVANT] Day {i}: we compared {i + 2} hotels in Bangkok near the river. The cheapest was {800 + 37 * i} baht a "
    f"night but had no pool; the best one, Riverside {i}, costs {2100 + 11 * i} baht and includes breakfast, "
    "a shuttle boat to the Grand Palace and late checkout on Sundays."
    for i in range(25)
]


def test_by_default_no_model_is_loaded():
    """491 MB and a background thread for summaries the guard rarely accepts: local_manager() loads none."""
    assert AFMConfig().compressor_model is None
    fm = local_manager()
    assert fm.components.abstractive is None
    fm.add_messages([{"role": "user", "content": LONG[0]}])
    assert fm.compression_pending == 0 and fm.messages[0].compressed.method == ExtractiveCompressor.name


@pytest.mark.slow
@needs_model
def test_build_context_does_not_wait_for_the_model():
    config = AFMConfig(compressor_model=MODEL, abstractive_summaries=True)
    comps = local_components(config, threads=1, abstractive=True)
    assert comps.abstractive is not None and comps.abstractive.name.startswith("guarded-llama:")
    fm = FocusManager(config, components=comps)
    fm.add_messages([{"role": "user", "content": text} for text in LONG])
    t = time.perf_counter()
    ctx = fm.build_context("Which hotel has a pool?", 600)
    elapsed = time.perf_counter() - t
    assert fm.compression_pending > 0  # the model is still busy ...
    assert elapsed < 0.1  # ... and packing did not wait for it
    assert all(m.compressed.method == ExtractiveCompressor.name for m in fm.messages[1:])
    assert ctx.tokens_used <= 600

    first = fm._pending[0]
    first.result(timeout=120)  # one job, to see its result used
    fm.close()
    refined = fm.messages[0].compressed
    outcomes = comps.abstractive.stats()["compress"]
    assert sum(outcomes.values()) >= 1  # the model was asked, and its summary judged
    if refined.method.startswith("llama:"):
        assert outcomes.get("accepted")
    else:  # refused: the guarded fallback replaces the instant form only when it is shorter than the message
        assert refined.method == ExtractiveCompressor.name or refined.method.startswith(
            f"{ExtractiveCompressor.name}(guard:"
        )
    assert fm.messages[0].placeholder.startswith("[Turn 1 · user:")
    assert fm.messages[0].topic != fm.messages[1].topic or fm.messages[0].topic == comps.topicer.topic(LONG[0])
    ctx = fm.build_context("Which hotel has a pool?", 600)
    compressed = [it for it in ctx.items if it.index == 0 and it.fidelity.value == "compressed"]
    if compressed:
        assert compressed[0].text == refined.text


@pytest.mark.slow
@needs_model
def test_by_default_a_named_model_only_names_topics():
    comps = local_components(AFMConfig(compressor_model=MODEL), threads=1, abstractive=True)
    fm = FocusManager(components=comps)
    fm.add_messages([{"role": "user", "content": LONG[3]}])
    extractive_topic = fm.messages[0].topic
    fm.wait_for_compression(timeout=120)
    message = fm.messages[0]
    assert message.compressed.method == ExtractiveCompressor.name  # summaries off by default (see the benchmark)
    words = message.topic.split()
    assert 1 <= len(words) <= 6
    assert message.topic != extractive_topic or comps.abstractive.topic_counts  # the model was asked
    assert message.topic.split()[0] in message.placeholder


def test_a_missing_model_leaves_the_extractive_compressor_alone(tmp_path, caplog):
    config = AFMConfig(compressor_model=str(tmp_path / "absent.gguf"))
    comps = local_components(config, threads=1, abstractive=True)
    assert comps.abstractive is None
    assert "extractive only" in caplog.text and "afm-local models install" in caplog.text
    fm = FocusManager(config, components=comps)
    fm.add_messages([{"role": "user", "content": LONG[0]}])
    assert fm.compression_pending == 0 and fm.messages[0].compressed.method == ExtractiveCompressor.name


EXIT_SCRIPT = """
import sys, time
from afm_local import AFMConfig, local_manager
config = AFMConfig(**({{"compressor_model": sys.argv[1]}} if len(sys.argv) > 1 else {{}}))
fm = local_manager(config)
texts = {texts!r}
fm.add_messages([{{"role": "user", "content": t}} for t in texts])
from afm_local.engine.background import background_worker
print("queued", fm.compression_pending, "skipped", background_worker().skipped, flush=True)
print("added", time.time(), flush=True)
"""


@pytest.mark.parametrize("model", [None, "qwen2.5-coder-0.5b-instruct"], ids=["default", "with-model"])
def test_a_script_that_adds_hundreds_of_long_messages_exits_at_once(model):
    """The background queue is bounded and dropped at exit: the process ends seconds after its last add."""
    import subprocess
    import sys

    texts = [LONG[i % len(LONG)] + f" Note {i}." for i in range(300)]
    args = [sys.executable, "-c", EXIT_SCRIPT.format(texts=texts)] + ([model] if model else [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    ended = time.time()
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert ended - float(lines["added"]) < 10.0
    queued = int(lines["queued"].split()[0])
    assert queued <= 64 + 1  # bounded: never one pending job per message
