"""``GuardedCompressor``: a model's summary when ``SummaryGuard`` accepts it, the extractive form otherwise,
saying in ``Compression.method`` which one it used and why."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..core.protocols import Compressor, Topicer
from ..core.types import Compression
from .checks import GuardVerdict, SummaryGuard
from .topics import KeyphraseTopicer

PrimaryLike = Compressor | Callable[[], Any] | None


class GuardedCompressor:
    """The model's summary when the guard accepts it, the extractive compression otherwise.

    ``primary`` is a compressor (with ``compress`` and ``topic``), a zero-argument factory that
    builds one on first use (so a missing model file is found, and recorded, lazily), or ``None``.
    ``method`` of the result is the primary's (``"llama:<model>"``) when accepted, else
    ``f"{fallback.name}(guard:<reason>)"``, e.g. ``"extractive(guard:dropped number)"``.
    ``counts`` and ``topic_counts`` hold how often each outcome happened, for metrics.

    ``length_policy="target"`` (default) holds the model to ``SummaryGuard``'s target length;
    ``"fallback"`` also accepts a summary up to the length of the extractive form it would be
    replaced by (which itself ignores the target whenever facts need the room). The benchmark
    reports both.
    """

    def __init__(
        self,
        primary: PrimaryLike,
        fallback: Compressor,
        guard: SummaryGuard,
        topic_fallback: Topicer | None = None,
        *,
        min_tokens: int = 8,
        length_policy: str = "target",
    ) -> None:
        if length_policy not in ("target", "fallback"):
            raise ValueError("length_policy must be 'target' or 'fallback'")
        self.length_policy = length_policy
        self._primary_source = primary
        self._primary: Any = None
        self.primary_error: str | None = None
        self.fallback = fallback
        self.guard = guard
        self.topic_fallback = topic_fallback or KeyphraseTopicer()
        self.min_tokens = min_tokens
        self.counts: dict[str, int] = {}
        self.topic_counts: dict[str, int] = {}
        self.last_verdict: GuardVerdict | None = None
        self._lock = threading.Lock()
        self._resolved = False
        self.name = "guarded"

    # -- primary resolution ----------------------------------------------------------------------

    @property
    def primary(self) -> Any:
        with self._lock:
            if not self._resolved:
                self._resolved = True
                source = self._primary_source
                if source is None:
                    self.primary_error = "no model configured"
                elif hasattr(source, "compress"):
                    self._primary = source
                else:
                    try:
                        self._primary = source()
                    except Exception as exc:  # a missing or corrupt model file, no llama_cpp, ...
                        self.primary_error = f"{type(exc).__name__}: {exc}"
            return self._primary

    def _count(self, table: dict[str, int], key: str) -> None:
        with self._lock:
            table[key] = table.get(key, 0) + 1

    def stats(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {"compress": dict(self.counts), "topic": dict(self.topic_counts)}

    # -- protocols -------------------------------------------------------------------------------

    def compress(self, text: str, ratio: float) -> Compression:
        total = self.guard.counter.count(text)
        if total <= self.min_tokens:
            return self._fallback(text, ratio, "short input")
        primary = self.primary
        if primary is None:
            return self._fallback(text, ratio, "model unavailable")
        try:
            candidate = primary.compress(text, ratio)
        except Exception as exc:
            self.last_verdict = GuardVerdict(False, "model error", {"error": f"{type(exc).__name__}: {exc}"})
            return self._fallback(text, ratio, "model error")
        target = max(1, round(total * ratio))
        limit = None
        if self.length_policy == "fallback":
            # Never reject a summary for being longer than the target when what we would send
            # instead (the extractive form, which keeps every fact-carrying sentence) is longer still.
            limit = self.guard.counter.count(self.fallback.compress(text, ratio).text)
        verdict = self.guard.check(text, candidate.text, target, limit)
        self.last_verdict = verdict
        if verdict.accepted:
            self._count(self.counts, "accepted")
            return candidate
        return self._fallback(text, ratio, verdict.reason)

    def _fallback(self, text: str, ratio: float, reason: str) -> Compression:
        self._count(self.counts, f"rejected:{reason}")
        result = self.fallback.compress(text, ratio)
        return Compression(result.text, f"{result.method}(guard:{reason})")

    def topic(self, text: str) -> str:
        return self.topic_with_method(text)[0]

    def topic_with_method(self, text: str) -> tuple[str, str]:
        """The topic and who produced it (``"llama:<model>"`` or ``"keyphrase(guard:<reason>)"``)."""
        primary = self.primary
        reason = "model unavailable"
        if primary is not None and hasattr(primary, "topic"):
            try:
                label = primary.topic(text)
                verdict = self.guard.check_topic(text, label)
                reason = verdict.reason
                if verdict.accepted:
                    self._count(self.topic_counts, "accepted")
                    return label, getattr(primary, "name", "primary")
            except Exception:
                reason = "model error"
        self._count(self.topic_counts, f"rejected:{reason}")
        return self.topic_fallback.topic(text), f"{self.topic_fallback.name}(guard:{reason})"
