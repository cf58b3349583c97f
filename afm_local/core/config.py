"""The one configuration object, passed down explicitly to every layer that needs a coefficient.

Every field is validated and described, so a bad value fails at construction with a message that
names the field, not deep inside packing. ``AFMConfig()`` is the best configuration measured on our
own long-conversation data (docs/benchmarks/long.md); ``AFMConfig.paper()`` is the AFM paper's
exact behaviour, kept for comparison. Why each default is what it is: docs/configuration.md.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .errors import InvalidInput
from .imagecost import AreaRule, ImageRule, PatchRule, TileRule, rule_for
from .parts import MediaLimits

Packing = Literal["afm", "paper"]
Render = Literal["chat", "structured"]
Fill = Literal["chronological", "score"]
Overflow = Literal["degrade", "raise"]
Spend = Literal["budget", "intended"]
Scoring = Literal["relevance", "paper"]
CompressedForm = Literal["excerpt", "summary"]
Placeholders = Literal["range", "message"]
EmbedderName = Literal["minilm-l6-v2", "multilingual-e5-small"]  # afm_local.local.embedding.EMBEDDERS


def check_budget(value: object, maximum: int | None = None, name: str = "budget_tokens") -> int:
    """The one check of a token budget: a positive integer (not a bool, a float or a string), at most
    ``maximum`` when there is one (the server's limit). ``InvalidInput`` names the rule."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise InvalidInput(f"{name} must be a positive integer, got {value!r}")
    if maximum is not None and value > maximum:
        raise InvalidInput(f"{name} must be at most {maximum:,}, got {value:,}")
    return value


class AFMConfig(BaseModel):
    """Coefficients of scoring, thresholds of fidelity, the packing policy and the components' names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Scoring. relevance (the default): dense and lexical relevance, with context, calibrated per history
    # (core.relevance); paper: the AFM paper's formula, w = 0.5 ** (messages_ago / half_life) (core.scoring).
    scoring: Scoring = Field(
        "relevance",
        description="relevance: each message's similarity to the query (or its best sentence's) with its neighbours', "
        "fused with a BM25 ranking and calibrated as z-scores within the history, so a score of 0.5 is average "
        "relevance and 0.95 about three standard deviations above it, whatever the embedder; paper: the AFM paper's "
        "formula (CRITICAL 1.0, RELEVANT sim * (base + recency_gain * w), TRIVIAL sim * scale * w).",
    )
    half_life: float = Field(12.0, gt=0, description="Messages after which the recency weight w halves.")
    critical_score: float = Field(1.0, ge=0, le=1, description="Score of a CRITICAL message.")
    context_before: float = Field(
        0.3,
        ge=0,
        le=2,
        description="relevance: weight of the previous message's similarity (an answer inherits the "
        "relevance of the question it answers).",
    )
    context_after: float = Field(0.3, ge=0, le=2, description="relevance: weight of the next message's similarity.")
    lexical_weight: float = Field(
        0.1, ge=0, le=5, description="relevance: weight of the BM25 ranking's z-score beside the dense one's."
    )
    recency_prior: float = Field(
        0.3,
        ge=0,
        le=5,
        description="relevance: z-sentences added to the newest message, halving every half_life messages.",
    )
    trivial_penalty: float = Field(
        0.5,
        ge=0,
        le=5,
        description="relevance: z-sentences taken from a TRIVIAL message (small talk that is also "
        "irrelevant goes first; a TRIVIAL message that is the most relevant of the history stays on top).",
    )
    relevant_base: float = Field(0.4, ge=0, description="paper: RELEVANT = max(0, sim) * (base + recency_gain * w).")
    relevant_recency: float = Field(0.4, ge=0, description="paper: the recency gain of a RELEVANT message's score.")
    trivial_scale: float = Field(0.25, ge=0, description="paper: TRIVIAL = max(0, sim) * scale * w.")
    similarity_floor: float | None = Field(
        None,
        ge=0,
        le=1,
        description="paper scoring: RELEVANT messages whose similarity to the query is at least this are scored "
        "without recency decay (w = 1); 0.8 suits multilingual-e5-small, about 0.4 minilm-l6-v2. None: the paper.",
    )

    # Intended fidelity
    full_threshold: float = Field(
        0.95, ge=0, le=1, description="Score at or above which a message is meant Full (the paper: 0.45)."
    )
    compressed_threshold: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Score at or above which a message is meant Compressed, else a placeholder (the paper: 0.25).",
    )

    # Forms
    compression_ratio: float = Field(0.35, gt=0, lt=1, description="Target share of tokens a compressed form keeps.")
    placeholder_max_tokens: int = Field(12, ge=4, le=64, description="Cap on a placeholder line, in tokens.")
    compressed_form: CompressedForm = Field(
        "excerpt",
        description="excerpt: a message's sentence (or list item) most relevant to the current query, verbatim, so a "
        "long relevant message costs its relevant sentence; summary: its query-independent extractive summary "
        "(every fact-bearing sentence kept; the paper's compressed form).",
    )
    excerpt_min_saving: int = Field(
        16,
        ge=0,
        le=1024,
        description="compressed_form=excerpt: a message is cut to its excerpt only when that saves this many tokens "
        "(about a range line's cost); a shorter message is sent whole or not at all.",
    )
    placeholders: Placeholders = Field(
        "range",
        description="range: a run of consecutive messages left out becomes one topic line for the turn range, the "
        "most relevant runs first, within placeholder_share of the budget; message: one stub per message (the paper).",
    )
    placeholder_share: float = Field(
        0.05, ge=0, lt=1, description="placeholders=range: the share of the history's budget set aside for range lines."
    )
    use_compression: bool = Field(True, description="Allow the compressed form (False: the paper's ablation).")
    use_placeholders: bool = Field(True, description="Allow the placeholder form (False: the paper's ablation).")
    max_placeholders: int | None = Field(
        None,
        ge=0,
        description="Keep the placeholder form for at most this many non-CRITICAL messages, the best scored "
        "(newer first on ties); the others are sent Full or Compressed when the budget allows, or left out. "
        "None: every message keeps its placeholder (the paper).",
    )

    reserve_placeholders: bool = Field(
        False,
        description="afm packing: reserve a placeholder for every message before any message gets a better fidelity "
        "(the paper's reservation, which on a long chat spends the budget on stubs); False: placeholders are given in "
        "fill order, after the better-scored messages' intended fidelities.",
    )

    # Packing
    packing: Packing = Field(
        "afm", description="afm: constraints reserved first, then the rest; paper: the paper's greedy pass."
    )
    fill: Fill = Field(
        "score",
        description="How the budget is shared after the constraints: best score first, or oldest to newest "
        "as the paper.",
    )
    render: Render = Field("chat", description="chat: the mixed-fidelity history; structured: one memory message.")
    spend: Spend = Field(
        "budget",
        description="budget: tokens left after the intended forms upgrade messages further, best score first, up "
        "to Full (a history that fits is sent whole); intended: stop at the intended forms (the paper).",
    )
    overflow: Overflow = Field(
        "degrade",
        description="When the CRITICAL messages at Full do not fit. degrade: send restated constraints once, long "
        "constraints as their constraint sentences, then demote model-labelled CRITICALs (``demote`` says which); "
        "raise BudgetTooSmall only when tagged constraints alone do not fit. raise: BudgetTooSmall (the paper).",
    )
    critical_share: float | None = Field(
        0.3,
        gt=0,
        le=1,
        description="Under overflow=degrade, the share of the history's budget that model-labelled CRITICAL messages "
        "may reserve; beyond it the same degrade steps apply, so false CRITICALs cannot crowd out everything the "
        "query needs. Messages tagged [!] or marked CRITICAL are not limited by it. None: the whole budget.",
    )
    demote: Literal["certainty", "relevance"] = Field(
        "relevance",
        description="overflow=degrade: which model-labelled CRITICAL messages leave an overfull reservation first: "
        "relevance: by the classifier's certainty and their relevance to the query together (core.relevance."
        "demotion_order; with scoring=paper, certainty alone); certainty: the least certain (the previous default).",
    )
    hard_floor: float | None = Field(
        0.8,
        ge=0,
        le=1,
        description="The least a model-labelled CRITICAL message from the user scores when overflow demoted it and the "
        "hard-constraint rules name it (a cap, a prohibition, a health fact, a deadline): it comes before the "
        "messages of ordinary relevance. Chosen on the dev split (answer words 83.1 / 90.8 / 96.1% at 1,000 / 2,000 "
        "/ 4,000 tokens, 83.1 / 91.0 / 96.1% without; 0.95 cost 2.1 points at 1,000, and a floor for every "
        "rule-named user message 7.2). None: scored like any other demoted message.",
    )
    consolidate_similarity: float = Field(
        0.9,
        ge=0,
        le=1,
        description="Cosine at or above which a later CRITICAL message may restate an earlier one (overflow=degrade): "
        "if it also says everything the earlier one says (text.facts.restates), the newest is sent Full and the older "
        "as a reference line. With the text check, 0.9 merges no two different constraints of data/scenarios with "
        "either embedder (docs/configuration.md).",
    )
    constraint_min_tokens: int = Field(
        40, ge=1, description="A CRITICAL message this long or longer gets a constraint-sentences form at ingest."
    )

    # Components, by name
    embedder: EmbedderName = Field(
        "multilingual-e5-small",
        description="Sentence embedder of the similarities: multilingual-e5-small (English, Russian and other Latin or "
        "Cyrillic text, across languages too; the importance classifier continues its layers, so a message is read "
        "once) or minilm-l6-v2 (English only). Their cosines sit in different bands; the relevance scoring calibrates "
        "them per history, so its thresholds hold for both (docs/configuration.md).",
    )
    tokenizer: str = Field(
        "o200k_base", description="Token counter of the budget: o200k_base, cl100k_base or gguf:PATH."
    )
    compressor_model: str | None = Field(
        None,
        description="Background GGUF model (manifest name or .gguf path, e.g. qwen2.5-coder-0.5b-instruct) that names "
        "placeholder topics and, with abstractive_summaries, proposes compressed forms; None (the default: the pinned "
        "0.5B model's summaries pass the guard too rarely to earn 491 MB and a thread): extractive forms and "
        "key-phrase topics only.",
    )
    abstractive_summaries: bool = Field(
        False, description="Let the background model propose compressed forms too (each checked by the guard)."
    )

    # Chat accounting, as OpenAI counts it (afm_local.core.accounting)
    per_message_overhead: int = Field(
        4,
        ge=0,
        description="Tokens a chat message costs beyond its content: OpenAI's 3 tokens of framing and the role's "
        "one token, as OpenAI's cookbook counts a message.",
    )
    reply_overhead: int = Field(3, ge=0, description="Tokens that prime the reply.")

    # Images and documents (afm_local.core.parts, afm_local.core.imagecost)
    vision_model: str = Field(
        "gpt-4o",
        description="The model whose published image-token rule counts image parts (core.imagecost.IMAGE_RULES: "
        "gpt-4o 85 + 170 a 512-px tile; gpt-4.1-mini, gpt-4.1-nano, o4-mini by 32-px patches; ...).",
    )
    image_rules: tuple[TileRule | PatchRule | AreaRule, ...] = Field(
        (), description="Image-token rules that add to or replace rows of the built-in table, keyed by model."
    )
    max_attachment_bytes: int = Field(10 << 20, ge=1, description="Largest image or file, in bytes (else 413).")
    max_image_pixels: int = Field(
        40_000_000,
        ge=1,
        description="Largest image, in pixels, checked from its header before decoding; also the largest PDF page "
        "as rendered for OCR (its size in points at 144 dpi), checked before any page is rendered (else 413).",
    )
    max_document_pages: int = Field(200, ge=1, description="Longest PDF, in pages (else 413).")
    max_document_text_bytes: int = Field(
        512 << 10,
        ge=1,
        description="Largest text of one document (a text file, checked before it is decoded; a PDF's text layer "
        "and OCR), in UTF-8 bytes (else 413).",
    )
    max_document_tokens: int = Field(
        50_000, ge=1, description="Longest text of one document, in tokens, counted before any other work (else 413)."
    )
    max_attachments: int = Field(16, ge=0, description="Most images and files in one message (else 413).")

    @model_validator(mode="after")
    def _thresholds_ordered(self) -> AFMConfig:
        if self.compressed_threshold > self.full_threshold:
            raise ValueError("compressed_threshold must not exceed full_threshold")
        rule_for(self.vision_model, self.image_rules)  # an unknown model fails here, naming the known ones
        return self

    @property
    def image_rule(self) -> ImageRule:
        return rule_for(self.vision_model, self.image_rules)

    @property
    def media_limits(self) -> MediaLimits:
        return MediaLimits(
            self.max_attachment_bytes, self.max_image_pixels, self.max_document_pages, self.max_document_text_bytes
        )

    @classmethod
    def paper(cls, **overrides: Any) -> AFMConfig:
        """The AFM paper exactly: its scoring and thresholds (no similarity floor), query-independent summaries, one
        placeholder per message, every placeholder kept, the greedy chronological pass, intended forms only, and
        ``BudgetTooSmall`` when constraints overflow."""
        base: dict[str, Any] = dict(
            scoring="paper",
            full_threshold=0.45,
            compressed_threshold=0.25,
            compressed_form="summary",
            placeholders="message",
            similarity_floor=None,
            max_placeholders=None,
            packing="paper",
            fill="chronological",
            spend="intended",
            overflow="raise",
            critical_share=None,
            hard_floor=None,
            reserve_placeholders=True,
        )
        return cls(**{**base, **overrides})


# What one build_context call may choose for itself (else the config's value), and the allowed values: the
# config's own Literals, so the engine, the command line and the server schemas spell them once.
CALL_OPTIONS: dict[str, tuple[str, ...]] = {
    name: get_args(AFMConfig.model_fields[name].annotation)
    for name in ("render", "packing", "fill", "spend", "overflow")
}
