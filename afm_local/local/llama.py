"""Abstractive compression and topic labels with a local GGUF model through llama.cpp.

``LlamaCppCompressor`` implements both the ``Compressor`` and the ``Topicer`` protocols. It is never
trusted on its own: ``afm_local.text.guarded.GuardedCompressor`` checks every output and falls back to the
extractive compressor. Decoding is deterministic (temperature 0), one line (a GBNF grammar that
forbids newlines, and ``\\n`` as a stop), and capped at a token budget proportional to the target.

* A model whose GGUF carries ``tokenizer.chat_template`` (Qwen2.5, SmolLM2: ChatML) is prompted
  through ``create_chat_completion`` with its own template, a system instruction and two short
  examples (one, in the source's language).
* A base model without a template (Gemma 3 270M base) gets a few-shot raw completion prompt.

The source language is detected from its letters (Cyrillic vs Latin) and the model is told to
answer in it. ``llama_cpp`` is imported lazily, so ``import afm_local`` never needs it. llama.cpp
is not thread-safe: every call into the model holds ``self._lock``.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from ..core.errors import ModelError
from ..core.types import Compression
from ..text.lexicon import detect_language
from .model_files import INSTALL_HINT, check_file, model_spec
from .paths import models_dir

_PREFIX = re.compile(
    r"^\s*(?:summary|short|compressed|shortened|topic|answer|output|кратко|сжато|тема|итог)\s*[:\-–—]\s*",
    re.IGNORECASE,
)
_QUOTES = "\"'«»“”„`"


_LANG_NAME = {"en": "English", "ru": "Russian"}

# Few-shot examples shared by the chat and the raw prompts (kept short: they are prompt-cached, but
# every token still costs time on the first call).
_EXAMPLES_COMPRESS = {
    "en": [
        (
            "I'm flying to Lisbon on 14 May with my two kids, and I really can't take more than 8 kg "
            "of hand luggage each, so please don't suggest anything heavy for the beach.",
            "Lisbon 14 May with two kids: can't take more than 8 kg hand luggage each, don't suggest heavy things.",
        ),
    ],
    "ru": [
        (
            "Кстати, у сына аллергия на арахис, поэтому никаких блюд с орехами, и ужин нужен не позже "
            "19:00, потому что он рано ложится.",
            "У сына аллергия на арахис: никаких блюд с орехами, ужин не позже 19:00.",
        ),
    ],
}
_EXAMPLES_TOPIC = {
    "en": [(_EXAMPLES_COMPRESS["en"][0][0], "Lisbon trip luggage limit")],
    "ru": [(_EXAMPLES_COMPRESS["ru"][0][0], "аллергия сына на арахис")],
}

_SYSTEM_COMPRESS = (
    "You shorten chat messages. Rewrite the message as ONE short line of at most {words} words, "
    "in {language}. Drop filler words and greetings. Keep every number, amount, date, name and "
    "negation (not, no, never, не, нет, без, нельзя) exactly as written, and every limit or "
    "constraint. Never add anything that is not in the message. Output only the shortened line."
)
_SYSTEM_TOPIC = (
    "Name what the message is about in 3 to 6 words, in {language}. Output only those words, no "
    "sentence, no punctuation at the end."
)


LLAMA_BUILD_HINT = (
    "llama-cpp-python is not installed; pip install 'afm-local[llm]' with "
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"'
)


def gguf_file(model: str | Path, root: Path | None = None) -> Path:
    """The one check of a GGUF model file: a manifest name's file must be installed and match its pinned
    sha256 (hashed once per process); a path (``.gguf``) must exist. ``ModelError`` names the fix."""
    if isinstance(model, Path) or model.endswith(".gguf"):
        path = Path(model).expanduser()
        if not path.is_file():
            raise ModelError(f"GGUF model {path} is missing; {INSTALL_HINT}, or give the path of a .gguf file")
        return path
    root = root or models_dir()
    spec = model_spec(model, root)
    if spec.kind != "gguf" or not spec.files:
        raise ModelError(f"model {model!r} is a {spec.kind!r}, not a GGUF model")
    return check_file(root / spec.files[0].path, spec.files[0].sha256, f"run `afm-local models install {model}`")


def load_llama(path: Path, *, n_ctx: int = 2048, threads: int = 1, vocab_only: bool = False, n_batch: int = 512) -> Any:
    """The one place a ``llama_cpp.Llama`` is built: threads pinned for prompt and generation alike
    (llama-cpp-python would otherwise use every core for the prompt), seed 0, quiet."""
    path = gguf_file(Path(path))
    try:
        from llama_cpp import Llama
    except ImportError as exc:  # the optional [llm] extra
        raise ModelError(LLAMA_BUILD_HINT) from exc
    if vocab_only:
        return Llama(model_path=str(path), vocab_only=True, verbose=False)
    return Llama(
        model_path=str(path),
        n_ctx=n_ctx,
        n_threads=threads,
        n_threads_batch=threads,
        seed=0,
        n_batch=n_batch,
        verbose=False,
    )


class LlamaCppCompressor:
    """A GGUF model as compressor and topicer; ``method`` is ``f"llama:{name}"``."""

    def __init__(
        self,
        model_path: str | Path,
        name: str | None = None,
        *,
        threads: int = 1,
        n_ctx: int = 2048,
        max_tokens: int = 192,
        grammar: bool = True,
        prompt_cache_mb: int = 256,
    ) -> None:
        path = Path(model_path).expanduser()
        self.path = path
        self.model_name = name or path.stem
        self.name = f"llama:{self.model_name}"
        self.max_tokens = max_tokens
        self.n_ctx = n_ctx
        self._lock = threading.Lock()
        # A small batch keeps the logits buffer small: llama-cpp-python copies all of it (n_batch x vocabulary
        # floats, 78 MB for Qwen2.5 at 128, 311 MB at the default 512) into every prompt-cache entry.
        self._llm = load_llama(path, n_ctx=n_ctx, threads=threads, n_batch=128)
        if prompt_cache_mb:
            # Keeps the evaluated state of earlier prompts, so the fixed instruction and example
            # prefix of compress() and of topic() is evaluated once each, even when calls alternate.
            self._llm.set_cache(_prompt_cache(prompt_cache_mb << 20))
        self.chat_template = self._llm.metadata.get("tokenizer.chat_template")
        self.has_chat_template = bool(self.chat_template)
        self._use_grammar = grammar
        self._grammars: dict[str, Any] = {}

    @classmethod
    def from_manifest(cls, name: str, root: Path | None = None, **kwargs: Any) -> LlamaCppCompressor:
        """Build from a manifest entry, after verifying the file's sha256 (``ModelError`` names the fix)."""
        return cls(gguf_file(name, root), name=name, **kwargs)

    # -- public protocol -------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        """Tokens in the model's own vocabulary."""
        with self._lock:
            return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def compress(self, text: str, ratio: float) -> Compression:
        text = " ".join(text.split())
        if not text:
            return Compression(text, self.name)
        language = detect_language(text)
        n_words = len(text.split())
        target_words = max(4, round(n_words * ratio * 0.85))  # small models overshoot a word count
        source_tokens = self.count_tokens(text)
        if source_tokens + self.max_tokens + 256 > self.n_ctx:
            # GuardedCompressor records this as "model error" and uses the extractive compressor.
            raise ValueError(f"message of {source_tokens} tokens does not fit n_ctx={self.n_ctx}")
        # Cap: the target in model tokens, with room for the model to finish its line. The guard
        # decides afterwards whether the result is short enough.
        cap = min(self.max_tokens, max(16, round(source_tokens * ratio * 1.6) + 8))
        system = _SYSTEM_COMPRESS.format(words=target_words, language=_LANG_NAME[language])
        out = self._generate(system, _EXAMPLES_COMPRESS[language], text, cap, "line", "Message", "Short")
        return Compression(out, self.name)

    def topic(self, text: str) -> str:
        text = " ".join(text.split())
        language = detect_language(text)
        system = _SYSTEM_TOPIC.format(language=_LANG_NAME[language])
        out = self._generate(system, _EXAMPLES_TOPIC[language], text, 24, "topic", "Message", "Topic")
        return " ".join(out.strip(" .,;:!?").split()[:6])

    # -- internals -------------------------------------------------------------------------------

    def _grammar(self, kind: str) -> Any:
        if not self._use_grammar:
            return None
        if kind not in self._grammars:
            from llama_cpp import LlamaGrammar

            rules = {
                # one line of text: any characters but a newline
                "line": r"root ::= [^\n]+",
                # 3 to 6 words separated by single spaces
                "topic": 'root ::= w (" " w) (" " w) (" " w)? (" " w)? (" " w)?\nw ::= [^ \\n\\t]+',
            }
            self._grammars[kind] = LlamaGrammar.from_string(rules[kind], verbose=False)
        return self._grammars[kind]

    def _generate(
        self,
        system: str,
        examples: list[tuple[str, str]],
        text: str,
        max_tokens: int,
        grammar: str,
        in_label: str,
        out_label: str,
    ) -> str:
        with self._lock:
            if self.has_chat_template:
                messages: list[dict[str, str]] = [{"role": "system", "content": system}]
                for source, answer in examples:
                    messages += [{"role": "user", "content": source}, {"role": "assistant", "content": answer}]
                messages.append({"role": "user", "content": text})
                result = self._llm.create_chat_completion(
                    messages,
                    temperature=0.0,
                    max_tokens=max_tokens,
                    stop=["\n"],
                    grammar=self._grammar(grammar),
                )
                raw = result["choices"][0]["message"]["content"] or ""
            else:
                # A base model: a few-shot document that it continues.
                lines = [system.replace("the message", "each message"), ""]
                for source, answer in examples:
                    lines += [f"{in_label}: {source}", f"{out_label}: {answer}", ""]
                lines += [f"{in_label}: {text}", f"{out_label}:"]
                result = self._llm.create_completion(
                    "\n".join(lines),
                    temperature=0.0,
                    max_tokens=max_tokens,
                    stop=["\n", f"{in_label}:"],
                    grammar=self._grammar(grammar),
                )
                raw = result["choices"][0]["text"] or ""
        return _clean(raw)


def _prompt_cache(capacity_bytes: int) -> Any:
    """llama-cpp-python's RAM prompt cache, counting what its entries really hold.

    ``LlamaRAMCache`` measures an entry by its KV state only, but every entry also keeps a copy of the
    logits buffer, so a "256 MB" cache of the background compressor grew by gigabytes over a few dozen
    messages. Counting both keeps it within ``capacity_bytes`` (about three entries at n_batch 128)."""
    from llama_cpp import LlamaRAMCache

    class _Counted(LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(s.llama_state_size + s.scores.nbytes for s in self.cache_state.values())

    return _Counted(capacity_bytes=capacity_bytes)


def _clean(raw: str) -> str:
    """First line, without a label such as "Summary:" and without wrapping quotes."""
    line = raw.strip().splitlines()[0] if raw.strip() else ""
    line = _PREFIX.sub("", line).strip()
    if len(line) >= 2 and line[0] in _QUOTES and line[-1] in _QUOTES:
        line = line[1:-1].strip()
    return line
