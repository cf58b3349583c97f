"""Token counting: tiktoken's ``o200k_base`` (gpt-4o-mini) by default, offline.

The vocabulary files are installed by the models script into ``models/tiktoken/`` under the names
tiktoken gives its cache entries, so plain ``tiktoken.get_encoding`` finds them and checks their
hashes itself. A GGUF model's own tokenizer is available too, so a budget can be counted in the
target model's tokens.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..core.errors import ModelError
from .model_files import INSTALL_HINT, verified_path
from .paths import models_dir

TIKTOKEN_FILES = {
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
}
_ENV_LOCK = threading.Lock()


class TiktokenCounter:
    """Counts with a tiktoken encoding read from the project's own offline copy."""

    def __init__(self, encoding: str = "o200k_base", root: Path | None = None) -> None:
        if encoding not in TIKTOKEN_FILES:
            raise ValueError(f"unknown encoding {encoding!r}; choose one of {sorted(TIKTOKEN_FILES)}")
        import tiktoken

        root = root or models_dir()
        cache = verified_path("tiktoken", TIKTOKEN_FILES[encoding], root).parent
        # tiktoken reads its cache folder from the environment at call time; scope the change.
        with _ENV_LOCK:
            previous = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
            try:
                self._encoding = tiktoken.get_encoding(encoding)
            except Exception as exc:
                raise ModelError(f"tiktoken {encoding} could not be loaded offline: {exc}; {INSTALL_HINT}") from exc
            finally:
                if previous is None:
                    del os.environ["TIKTOKEN_CACHE_DIR"]
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = previous
        self.name = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(text, disallowed_special=())

    def decode(self, ids: list[int]) -> str:
        return self._encoding.decode(ids)


class GgufTokenCounter:
    """Counts with a GGUF model's own tokenizer (loaded alone, ``vocab_only``: about 0.3 s, 93 MB)."""

    def __init__(self, model_path: Path) -> None:
        from .llama import load_llama

        self._llama = load_llama(Path(model_path), vocab_only=True)
        self.name = f"gguf:{Path(model_path).name}"

    def count(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))
