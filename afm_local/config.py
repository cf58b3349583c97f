"""The one configuration object, passed down explicitly to every layer that needs a coefficient.

Defaults are the paper's. Every field is validated, so a bad value fails at construction with a
message that names the field, not deep inside packing.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Packing = Literal["afm", "paper"]
Render = Literal["chat", "structured"]
Fill = Literal["chronological", "score"]


class AFMConfig(BaseModel):
    """Coefficients of scoring, thresholds of fidelity and the packing policy."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Scoring: w = 0.5 ** (messages_ago / half_life)
    half_life: float = Field(12.0, gt=0, description="Messages after which the recency weight halves.")
    critical_score: float = Field(1.0, ge=0, le=1)
    relevant_base: float = Field(0.4, ge=0, description="RELEVANT = max(0, sim) * (base + recency_gain * w).")
    relevant_recency: float = Field(0.4, ge=0)
    trivial_scale: float = Field(0.25, ge=0, description="TRIVIAL = max(0, sim) * scale * w.")

    # Intended fidelity
    full_threshold: float = Field(0.45, ge=0, le=1)
    compressed_threshold: float = Field(0.25, ge=0, le=1)

    # Forms
    compression_ratio: float = Field(0.35, gt=0, lt=1, description="Target share of tokens kept.")
    placeholder_max_tokens: int = Field(12, ge=4, le=64)

    # Forms that may be used; switching one off is an ablation (the paper's "no placeholders",
    # "no compression"): a message that would take that form takes the next smaller one, or is dropped.
    use_compression: bool = True
    use_placeholders: bool = True

    # Packing
    packing: Packing = "afm"
    fill: Fill = Field(
        "chronological",
        description="How spare budget is shared: oldest to newest as the paper, or highest score first.",
    )
    render: Render = "chat"

    # Long conversations (optional; None keeps the paper's behaviour exactly). Added for
    # scripts/bench_long.py: with hundreds of messages the paper's recency decay turns old but
    # relevant evidence into placeholders, and the placeholder floor alone outgrows the budget, so
    # the afm packer drops the oldest messages whatever their score.
    similarity_floor: float | None = Field(
        None,
        ge=0,
        le=1,
        description="RELEVANT messages whose cosine similarity to the query is at least this are scored "
        "without recency decay (w = 1): old relevance is still relevance. None: the paper's formula.",
    )
    max_placeholders: int | None = Field(
        None,
        ge=0,
        description="Keep the placeholder form for at most this many non-CRITICAL messages, those with the "
        "highest score (newer first on ties). The others may still be sent Full or Compressed when their "
        "score intends it and the budget allows; otherwise they are left out. None: every message keeps "
        "its placeholder (the paper's behaviour).",
    )

    # Components, by name: the token counter the budget is counted in ("o200k_base", "cl100k_base",
    # or "gguf:PATH" for a local model's own tokenizer), and the GGUF model that runs in the
    # background (a manifest name or a .gguf path; None: extractive forms and key-phrase topics only).
    tokenizer: str = "o200k_base"
    compressor_model: str | None = "qwen2.5-coder-0.5b-instruct"
    abstractive_summaries: bool = Field(
        False,
        description=(
            "Let the background model propose compressed forms too (each checked by the guard). Off by "
            "default: with the 0.5B model the guard accepted 2% of its summaries at ratio 0.35 "
            "(docs/benchmarks/compression.md), so it only names placeholder topics."
        ),
    )

    # Chat accounting, as OpenAI counts it: each message costs its content plus a fixed overhead,
    # and the reply is primed with a few more tokens.
    per_message_overhead: int = Field(3, ge=0)
    reply_overhead: int = Field(3, ge=0)

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> "AFMConfig":
        if self.compressed_threshold > self.full_threshold:
            raise ValueError("compressed_threshold must not exceed full_threshold")
        return self
