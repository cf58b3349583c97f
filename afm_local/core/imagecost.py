"""What an image part costs the target model, by the provider's published rules (never by its base64 length).

Three rules: two as OpenAI publishes them (platform.openai.com/docs/guides/images-vision, "Calculating
costs"), and Anthropic's (``AreaRule``: pixels / 750 after its resize, every ``claude-*`` model):

* ``TileRule`` (gpt-4o, gpt-4.1, gpt-4.5, o1, o3 ...): ``detail: low`` costs ``base`` tokens; ``high`` scales
  the image to fit a 2048 × 2048 square, then so that its shortest side is at most 768 px, and costs
  ``base + tile × (512-px tiles that cover it)``. gpt-4o: 85 + 170 a tile.
* ``PatchRule`` (gpt-4.1-mini, gpt-4.1-nano, o4-mini): the 32-px patches that cover the image, at most
  ``cap`` (a larger image is scaled down until it fits, keeping a whole number of patches across its
  width or height), times a per-model multiplier; ``detail`` changes nothing.

``detail: auto`` lets the provider choose, so it is counted as ``high``: the budget is never exceeded.
An image known only by URL (never fetched) has no size: it is counted at the rule's worst case.
Pure arithmetic; the table is keyed by model name (a dated or suffixed name takes its family's row) and
``AFMConfig.image_rules`` adds or replaces rows. A request for a model with no row is counted by
``AFMConfig.vision_model``'s rule (gpt-4o's by default): the documented default (docs/server.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import InvalidInput
from .parts import Detail

PATCH = 32


@dataclass(frozen=True, slots=True)
class TileRule:
    """512-px tiles after fitting ``fit`` × ``fit`` and a shortest side of ``short``; ``low`` costs ``base``."""

    model: str
    base: int
    tile: int
    fit: int = 2048
    short: int = 768
    size: int = 512

    def tokens(self, width: int, height: int, detail: Detail) -> int:
        if detail == "low":
            return self.base
        w, h = float(width), float(height)
        if max(w, h) > self.fit:
            w, h = w * self.fit / max(w, h), h * self.fit / max(w, h)
        if min(w, h) > self.short:
            w, h = w * self.short / min(w, h), h * self.short / min(w, h)
        return self.base + self.tile * math.ceil(w / self.size) * math.ceil(h / self.size)

    def worst(self, detail: Detail) -> int:
        """The most any image can cost: after both scalings the longest side is at most ``fit`` and the
        shortest at most ``short``."""
        return self.tokens(self.fit, self.short, detail)


@dataclass(frozen=True, slots=True)
class PatchRule:
    """32-px patches, at most ``cap`` (scaled down to fit), times ``multiplier``, rounded up."""

    model: str
    multiplier: float
    cap: int = 1536

    def patches(self, width: int, height: int) -> int:
        raw = math.ceil(width / PATCH) * math.ceil(height / PATCH)
        if raw <= self.cap:
            return raw
        shrink = math.sqrt(PATCH * PATCH * self.cap / (width * height))
        w, h = width * shrink / PATCH, height * shrink / PATCH  # in patches, not yet whole
        shrink *= min(math.floor(w) / w, math.floor(h) / h)
        return math.ceil(int(width * shrink) / PATCH) * math.ceil(int(height * shrink) / PATCH)

    def tokens(self, width: int, height: int, detail: Detail) -> int:
        return math.ceil(self.patches(width, height) * self.multiplier - 1e-9)

    def worst(self, detail: Detail) -> int:
        return math.ceil(self.cap * self.multiplier - 1e-9)


@dataclass(frozen=True, slots=True)
class AreaRule:
    """Anthropic (claude-*): ``width × height / divisor`` tokens, after the image is scaled down (aspect kept) to a
    longest side of at most ``long_edge`` px and at most ``max_tokens`` worth of pixels; ``detail`` changes
    nothing (docs.anthropic.com, "Vision": "Evaluate image size")."""

    model: str
    divisor: int = 750
    long_edge: int = 1568
    max_tokens: int = 1600

    def tokens(self, width: int, height: int, detail: Detail) -> int:
        w, h = float(width), float(height)
        scale = min(1.0, self.long_edge / max(w, h), math.sqrt(self.max_tokens * self.divisor / (w * h)))
        w, h = math.floor(w * scale), math.floor(h * scale)
        return min(self.max_tokens, math.ceil(w * h / self.divisor))

    def worst(self, detail: Detail) -> int:
        return self.max_tokens


ImageRule = TileRule | PatchRule | AreaRule

IMAGE_RULES: dict[str, ImageRule] = {
    rule.model: rule
    for rule in (
        TileRule("gpt-4o", 85, 170),
        TileRule("chatgpt-4o-latest", 85, 170),
        TileRule("gpt-4.1", 85, 170),
        TileRule("gpt-4.5-preview", 85, 170),
        TileRule("gpt-4o-mini", 2833, 5667),
        TileRule("o1", 75, 150),
        TileRule("o1-pro", 75, 150),
        TileRule("o3", 75, 150),
        TileRule("computer-use-preview", 65, 129),
        PatchRule("gpt-4.1-mini", 1.62),
        PatchRule("gpt-4.1-nano", 2.46),
        PatchRule("o4-mini", 1.72),
        AreaRule("claude"),
    )
}


def rule_for(model: str, extra: tuple[ImageRule, ...] = ()) -> ImageRule:
    """The rule of ``model``: an exact name, else the longest name it starts with (``gpt-4o-2024-08-06`` is
    ``gpt-4o``; ``gpt-4o-mini-…`` is ``gpt-4o-mini``); ``extra`` rows win over the table."""
    table = {**IMAGE_RULES, **{rule.model: rule for rule in extra}}
    if model in table:
        return table[model]
    prefixes = [name for name in table if model.startswith(name + "-")]
    if not prefixes:
        raise InvalidInput(
            f"no image-token rule for model {model!r}; known: {', '.join(sorted(table))} "
            f"(add one with AFMConfig(image_rules=...))"
        )
    return table[max(prefixes, key=len)]


def image_tokens(rule: ImageRule, width: int, height: int, detail: Detail) -> int:
    """Tokens of one image part of ``width`` × ``height`` pixels at ``detail`` (0 × 0: size unknown, the
    worst case)."""
    if width <= 0 or height <= 0:
        return rule.worst(detail)
    return rule.tokens(width, height, detail)
