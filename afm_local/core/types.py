"""Plain data shared by every layer: importance classes, fidelities, messages and packed contexts.

These are dataclasses and enums only, so the algorithm modules can exchange them without importing
any model code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .parts import Attached
from .vocabulary import Fidelity, Importance, Role

if TYPE_CHECKING:
    from .units import UnitForms


@dataclass(frozen=True, slots=True)
class Utterance:
    """A message as an importance classifier reads it: its text (any tag removed) and who said it."""

    text: str
    role: str = "user"


@dataclass(frozen=True, slots=True)
class Classification:
    """One classifier verdict: the label, per-class probabilities and which layer decided it."""

    label: Importance
    scores: dict[str, float]
    source: str  # "tag", "rule", "model" or "default"


@dataclass(frozen=True, slots=True)
class Compression:
    """A message's compressed text and the component that produced it (for audit and benchmarks)."""

    text: str
    method: str  # e.g. "extractive" or "llama:<model>"


@dataclass(frozen=True, slots=True)
class Sentences:
    """A message's sentences and list items (its sentences), made at ingest: where each lies in the text, what it
    costs alone, and its vector from the same encoder pass as the message's. A query-aware excerpt of the
    message is one of them, verbatim."""

    spans: tuple[tuple[int, int], ...]
    tokens: tuple[int, ...]
    vectors: np.ndarray  # float32 (len(spans), dim), unit rows

    def text(self, content: str, sentence: int) -> str:
        a, b = self.spans[sentence]
        return content[a:b]


@dataclass(slots=True)
class Message:
    """A history message with every artifact derived from it, each computed once.

    ``content`` is the text that is sent (a leading importance tag already removed); ``raw`` is what
    the caller gave.
    """

    index: int
    role: Role
    content: str
    raw: str
    content_hash: str
    importance: Importance
    importance_source: str
    tokens_full: int
    compressed: Compression
    tokens_compressed: int
    topic: str
    placeholder: str
    tokens_placeholder: int
    id: str = ""
    importance_scores: dict[str, float] = field(default_factory=dict)
    constraints: str = ""  # a long CRITICAL message's constraint sentences verbatim, the rest compressed
    tokens_constraints: int = 0
    tokens_reference: int = 0  # its reference line, should a later message restate it (core.render)
    sentences: Sentences | None = None  # its sentences, for query-aware excerpts (None: the message is one sentence)
    unit: UnitForms | None = None  # a tool-call unit's API messages, whole and compressed (core.units)
    attachments: tuple[Attached, ...] = ()  # images and files; their costs are in tokens_full / tokens_compressed

    @property
    def pinned(self) -> bool:
        """CRITICAL by the user's word (a tag or an explicit importance): never demoted."""
        return self.importance_source == "tag" and self.importance is Importance.CRITICAL

    @property
    def excerptable(self) -> bool:
        """Whether a query-aware excerpt (one sentence) can stand for it: it has sentences, and no images or
        files (their compressed form is their own: a thumbnail and a summary; its sentences still score it)."""
        return self.sentences is not None and not self.attachments


@dataclass(frozen=True, slots=True)
class ContextItem:
    """The fate of one history message in one packed context."""

    index: int
    role: Role
    importance: Importance
    score: float
    similarity: float
    recency: float
    intended: Fidelity
    fidelity: Fidelity
    tokens: int
    text: str
    reason: str = ""
    tools: tuple[str, ...] = ()  # the tools a tool-call unit called
    attachments: tuple[dict[str, object], ...] = ()  # how each image or file was sent (core.forms.attachment_account)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "index": self.index,
            "role": self.role,
            "importance": self.importance.value,
            "score": round(self.score, 6),
            "similarity": round(self.similarity, 6),
            "recency": round(self.recency, 6),
            "intended": self.intended.value,
            "fidelity": self.fidelity.value,
            "tokens": self.tokens,
            "reason": self.reason,
            "attachments": list(self.attachments),
        }
        if self.tools:
            out["tools"] = list(self.tools)
        return out


@dataclass(frozen=True)
class Context:
    """What ``build_context`` returns: the messages to send and the account of every history message.

    The per-message account (``items``) is made on first read: a caller that only sends
    ``messages`` does not pay for one object per history message.
    """

    messages: list[dict[str, Any]]  # OpenAI chat messages: content parts when images are sent, a unit's tool calls
    tokens_used: int
    budget_tokens: int
    render: str
    packing: str
    language: str
    fidelity_counts: dict[str, int]
    query_index: int  # where the query stands in ``messages``: last, unless an agent's tool loop follows it
    make_items: Callable[[], list[ContextItem]] = field(repr=False, compare=False)

    @cached_property
    def items(self) -> list[ContextItem]:
        return self.make_items()

    @classmethod
    def json_fields(cls) -> tuple[str, ...]:
        """The fields ``to_dict`` writes as they are (all but the items' maker); the items come after them.
        The server's response schema is made from these too (``server.schemas.ContextOut``)."""
        return tuple(f.name for f in fields(cls) if f.name != "make_items")

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {name: getattr(self, name) for name in self.json_fields()}
        out["items"] = [item.to_dict() for item in self.items]
        return out
