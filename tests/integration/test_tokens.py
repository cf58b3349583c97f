"""Token counts equal tiktoken's own, offline, for both encodings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from afm_local.local.paths import models_dir
from afm_local.local.tokens import TiktokenCounter

TEXTS = [
    "Hello, world!",
    "I have a severe peanut allergy. Even traces can send me to hospital.",
    "Бюджет строго до 300 тысяч рублей, больше денег нет.",
    "混合テキスト and code: def f(x): return x ** 2  # ok",
    "<|endoftext|> is just text here",
    "",
]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_counts_equal_plain_tiktoken(encoding):
    """A separate process with only TIKTOKEN_CACHE_DIR set, as tiktoken documents it, must agree."""
    script = (
        "import json, sys, tiktoken\n"
        f"enc = tiktoken.get_encoding({encoding!r})\n"
        "print(json.dumps([len(enc.encode(t, disallowed_special=())) for t in json.loads(sys.stdin.read())]))\n"
    )
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(models_dir() / "tiktoken"))
    out = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(TEXTS), capture_output=True, text=True, env=env, check=True
    )
    counter = TiktokenCounter(encoding)
    assert [counter.count(t) for t in TEXTS] == json.loads(out.stdout)


def test_known_o200k_counts():
    counter = TiktokenCounter()
    assert counter.name == "tiktoken:o200k_base"
    assert counter.count("Hello, world!") == 4
    assert counter.encode("Hello") == [13225]


def test_unknown_encoding_is_rejected():
    with pytest.raises(ValueError, match="unknown encoding"):
        TiktokenCounter("p50k_base")


def test_the_parsed_table_is_bound_to_its_verified_vocabulary(tmp_path):
    """The fast table beside the vocabulary is used only when it matches the verified file; a tampered
    table is ignored (re-parsed and rewritten), and the counts never change."""
    import shutil

    from afm_local.local.tokens import TIKTOKEN_FILES, ranks_table

    source = tmp_path / TIKTOKEN_FILES["cl100k_base"]
    shutil.copy(models_dir() / "tiktoken" / source.name, source)
    parsed = ranks_table(source)  # parses and saves
    table = source.with_name(source.name + ".ranks.npz")
    assert table.is_file() and ranks_table(source) == parsed  # read back from the table
    data = bytearray(table.read_bytes())
    data[-100] ^= 0xFF
    table.write_bytes(bytes(data))
    assert ranks_table(source) == parsed  # the tampered table failed its stamp and was rebuilt
    assert ranks_table(source) == parsed
