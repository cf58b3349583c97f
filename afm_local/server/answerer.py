"""The built-in llama.cpp answerer for ``/v1/chat/completions`` when the server has no upstream."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..core.errors import ModelError
from ..local.llama import gguf_file, load_llama
from ..local.model_files import answerer_models
from .errors import APIError, error_body
from .schemas import ChatCompletionRequest

log = logging.getLogger("afm_local.server")

BUILTIN_DEFAULT_MAX_TOKENS = 256
BUILTIN_MAX_TOKENS = 1024


class BuiltinModel:
    """The llama.cpp answerer used when there is no upstream; loaded on first use, one thread only."""

    def __init__(self, path: Path | None, threads: int, n_ctx: int) -> None:
        self.path, self.threads, self.n_ctx = path, threads, n_ctx
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="afm-llama")
        self._llm: Any = None
        self.name = "afm-local-builtin"

    def _resolve(self) -> Path:
        if self.path is not None:
            return self.path
        names = answerer_models()  # the manifest's "answerer" entries, in their order
        for name in names:
            try:
                return gguf_file(name)
            except ModelError as exc:
                log.warning("built-in model: %s", exc)
        raise ModelError(
            "no built-in chat model is installed and no --upstream is set: run "
            f"`afm-local models install {names[0] if names else 'NAME'}` or start the server with --upstream"
        )

    def ensure_loaded(self) -> Any:
        """The model, loaded on first use (on the llama thread); ``ModelError`` (503) when it cannot be."""
        if self._llm is None:
            path = self._resolve()
            self._llm = load_llama(path, n_ctx=self.n_ctx, threads=self.threads)
            self.name = f"afm-local/{path.stem}"
        return self._llm

    @staticmethod
    def params(request: ChatCompletionRequest) -> dict[str, Any]:
        extra = request.model_extra or {}
        out: dict[str, Any] = {"max_tokens": min(request.max_tokens or BUILTIN_DEFAULT_MAX_TOKENS, BUILTIN_MAX_TOKENS)}
        if request.temperature is not None:
            out["temperature"] = request.temperature
        for key in ("top_p", "seed", "presence_penalty", "frequency_penalty"):
            if isinstance(extra.get(key), (int, float)) and not isinstance(extra.get(key), bool):
                out[key] = extra[key]
        stop = extra.get("stop")
        if isinstance(stop, str) or (
            isinstance(stop, list) and all(isinstance(s, str) for s in stop) and len(stop) <= 4
        ):
            out["stop"] = stop
        return out

    def complete(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        llm = self.ensure_loaded()
        try:
            result = llm.create_chat_completion(messages=messages, **params)
        except ValueError as exc:  # e.g. the prompt does not fit n_ctx
            raise APIError(400, "context_length_exceeded", str(exc)[:300]) from None
        result["model"] = self.name
        return result

    def stream(
        self,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        emit: Callable[[Any], None],
        cancelled: threading.Event,
    ) -> None:
        try:
            llm = self.ensure_loaded()
            for chunk in llm.create_chat_completion(messages=messages, stream=True, **params):
                if cancelled.is_set():
                    break
                chunk["model"] = self.name
                emit(chunk)
        except ModelError as exc:
            emit(error_body("model_unavailable", str(exc)))
        except ValueError as exc:
            emit(error_body("context_length_exceeded", str(exc)[:300]))
        except Exception:
            log.exception("built-in model failed while streaming")
            emit(error_body("internal_error", "the built-in model failed"))
        finally:
            emit(None)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
