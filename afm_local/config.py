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

    # Chat accounting, as OpenAI counts it: each message costs its content plus a fixed overhead,
    # and the reply is primed with a few more tokens.
    per_message_overhead: int = Field(3, ge=0)
    reply_overhead: int = Field(3, ge=0)

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> "AFMConfig":
        if self.compressed_threshold > self.full_threshold:
            raise ValueError("compressed_threshold must not exceed full_threshold")
        return self
