"""The whole pipeline runs with every socket blocked: nothing reaches the network."""

from __future__ import annotations

import socket

import pytest

from afm_local import AFMConfig, FocusManager, local_components
from tests.support.real import example
from tests.support.servers import NetworkUsed


def test_pipeline_makes_no_network_connection(no_network):
    # every model afresh, the GGUF one too (named: the default loads none)
    comps = local_components(AFMConfig(compressor_model="qwen2.5-coder-0.5b-instruct"), threads=1, abstractive=True)
    with pytest.raises(NetworkUsed):
        socket.create_connection(("127.0.0.1", 9))
    data = example("peanut_trip")
    fm = FocusManager(components=comps)
    fm.add_messages(data["messages"])
    for render in ("chat", "structured"):
        ctx = fm.build_context(data["query"], 400, data["preamble"], render=render)
        assert ctx.tokens_used <= 400


@pytest.mark.parametrize("embedder", ["minilm-l6-v2", "multilingual-e5-small"])
def test_engine_and_server_do_not_import_torch(embedder):
    """Nor onnx, which only ``afm-local models install`` needs (to build multilingual-e5-small)."""
    import subprocess
    import sys

    script = (
        "import sys, json\n"
        "from afm_local import AFMConfig, FocusManager, local_components\n"
        "import afm_local.server.app, afm_local.local.llama, afm_local.text.guarded\n"
        f"config = AFMConfig(embedder={embedder!r})\n"
        "fm = FocusManager(config, components=local_components(config, threads=1))\n"
        "fm.add_message('user', 'I am allergic to peanuts.')\n"
        "fm.build_context('What should I eat?', 200)\n"
        "print(json.dumps(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'onnx') "
        "if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
