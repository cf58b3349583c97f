"""Token counting: tiktoken's ``o200k_base`` (gpt-4o-mini) by default, offline.

The vocabulary files are installed by the models script into ``models/tiktoken/`` (named as tiktoken
names its cache entries) and verified by sha256 like every model file. A GGUF model's own tokenizer is
available too, so a budget can be counted in the target model's tokens.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from ..core.errors import ModelError
from .model_files import INSTALL_HINT, sha256_file, verified_path
from .paths import models_dir

TIKTOKEN_FILES = {
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
}
_LOADER_LOCK = threading.Lock()


class TiktokenCounter:
    """Counts with a tiktoken encoding read from the project's own offline copy.

    Parsing the base64 vocabulary is most of a cold start (about 0.8 s for o200k_base), so the parsed
    table is kept next to the verified file (``ranks_table``) and read back in a few milliseconds."""

    def __init__(self, encoding: str = "o200k_base", root: Path | None = None) -> None:
        if encoding not in TIKTOKEN_FILES:
            raise ValueError(f"unknown encoding {encoding!r}; choose one of {sorted(TIKTOKEN_FILES)}")
        import tiktoken
        import tiktoken_ext.openai_public as public

        source = verified_path("tiktoken", TIKTOKEN_FILES[encoding], root or models_dir())
        ranks = ranks_table(source)
        # tiktoken's own definition of the encoding (pattern, special tokens) with our vocabulary: its
        # loader is swapped for the duration of the call, so it neither reads nor fetches anything.
        with _LOADER_LOCK:
            original = public.load_tiktoken_bpe
            public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
            try:
                self._encoding = tiktoken.Encoding(**getattr(public, encoding)())
            except Exception as exc:
                raise ModelError(f"tiktoken {encoding} could not be loaded offline: {exc}; {INSTALL_HINT}") from exc
            finally:
                public.load_tiktoken_bpe = original
        self.name = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(text, disallowed_special=())

    def decode(self, ids: list[int]) -> str:
        return self._encoding.decode(ids)


def ranks_table(source: Path) -> dict[bytes, int]:
    """The token table of a verified tiktoken vocabulary, from the parsed copy beside it when that copy
    is bound to this very file (its stamp records the source's and its own sha256), else parsed and
    saved for next time. A read-only models folder only costs the parse."""
    table = source.with_name(source.name + ".ranks.npz")
    stamp = source.with_name(source.name + ".ranks.json")
    source_sha = sha256_file(source)
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
        if recorded["source_sha256"] == source_sha and recorded["sha256"] == sha256_file(table):
            with np.load(table, allow_pickle=False) as data:
                lengths, blob = data["lengths"], data["blob"].tobytes()
            offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths, dtype=np.int64)]).tolist()
            return {blob[a:b]: rank for rank, (a, b) in enumerate(zip(offsets, offsets[1:]))}
    except (OSError, ValueError, KeyError):
        pass
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(source), expected_hash=source_sha)
    ordered = sorted(ranks, key=ranks.__getitem__)
    if [ranks[t] for t in ordered] != list(range(len(ordered))):
        return ranks  # not a dense table: nothing to save
    try:
        tmp = table.with_name(table.name + ".partial.npz")
        np.savez(
            tmp,
            lengths=np.array([len(t) for t in ordered], dtype=np.uint16),
            blob=np.frombuffer(b"".join(ordered), dtype=np.uint8),
        )
        tmp.replace(table)
        stamp.write_text(json.dumps({"source_sha256": source_sha, "sha256": sha256_file(table)}), encoding="utf-8")
    except OSError:
        pass
    return ranks


class GgufTokenCounter:
    """Counts with a GGUF model's own tokenizer (loaded alone, ``vocab_only``: about 0.3 s, 93 MB)."""

    def __init__(self, model_path: Path) -> None:
        from .llama import load_llama

        self._llama = load_llama(Path(model_path), vocab_only=True)
        self.name = f"gguf:{Path(model_path).name}"

    def count(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))
