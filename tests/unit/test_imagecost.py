"""Image tokens by the published rules: gpt-4o tiles (both detail levels, several sizes) and the patch rule."""

from __future__ import annotations

import pytest

from afm_local import AFMConfig
from afm_local.core.errors import InvalidInput
from afm_local.core.imagecost import PatchRule, TileRule, image_tokens, rule_for

GPT4O = rule_for("gpt-4o")


@pytest.mark.parametrize(
    ("size", "high"),
    [
        ((1024, 1024), 765),  # OpenAI's example: scaled to 768 × 768, 4 tiles
        ((2048, 4096), 1105),  # OpenAI's example: 1024 × 2048, then 768 × 1536, 6 tiles
        ((512, 512), 255),  # one tile
        ((513, 513), 765),  # one pixel more: 2 × 2 tiles
        ((900, 339), 425),  # the pricing screenshot: 2 × 1 tiles, no scaling
        ((4000, 1500), 1445),  # fit into 2048 (2048 × 768), 4 × 2 tiles: the most any image costs
        ((100, 5000), 85 + 170 * 1 * 4),  # fit into 2048 (41 × 2048): 1 × 4 tiles
    ],
)
def test_gpt4o_tiles_match_the_published_examples(size, high):
    assert image_tokens(GPT4O, *size, "high") == high
    assert image_tokens(GPT4O, *size, "auto") == high  # auto is counted as high: never under the budget
    assert image_tokens(GPT4O, *size, "low") == 85


def test_an_image_of_unknown_size_costs_the_worst_case():
    assert image_tokens(GPT4O, 0, 0, "high") == 1445 and image_tokens(GPT4O, 0, 0, "low") == 85
    assert image_tokens(rule_for("gpt-4.1-mini"), 0, 0, "high") == 2489  # 1536 patches × 1.62


@pytest.mark.parametrize(
    ("model", "size", "tokens"),
    [
        ("gpt-4.1-mini", (1024, 1024), 1659),  # 1024 patches × 1.62 = 1658.88
        ("gpt-4.1-mini", (1800, 2400), 2353),  # OpenAI's example: scaled to 1056 × 1408, 1452 patches × 1.62
        ("gpt-4.1-nano", (1800, 2400), 3572),  # 1452 × 2.46 = 3571.92
        ("o4-mini", (256, 256), 111),  # 64 patches × 1.72 = 110.08
        ("o4-mini", (33, 33), 7),  # 2 × 2 patches
    ],
)
def test_patch_models_count_32px_patches_under_a_cap_times_a_multiplier(model, size, tokens):
    rule = rule_for(model)
    assert isinstance(rule, PatchRule)
    assert image_tokens(rule, *size, "high") == tokens == image_tokens(rule, *size, "low")


def test_the_patch_cap_scales_large_images_down():
    rule = rule_for("gpt-4.1-mini")
    assert rule.patches(1800, 2400) == 1452 and rule.patches(4000, 4000) <= 1536 and rule.patches(10, 10) == 1


def test_models_are_found_by_name_or_dated_name_and_the_table_is_configurable():
    assert rule_for("gpt-4o-2024-08-06") == GPT4O
    assert rule_for("gpt-4o-mini-2024-07-18") == TileRule("gpt-4o-mini", 2833, 5667)
    with pytest.raises(InvalidInput, match="no image-token rule for model 'llava'"):
        rule_for("llava")
    config = AFMConfig(vision_model="my-vlm", image_rules=({"model": "my-vlm", "multiplier": 1.2},))
    assert config.image_rule == PatchRule("my-vlm", 1.2)
    assert AFMConfig(vision_model="o3").image_rule.tokens(1024, 1024, "high") == 75 + 150 * 4
    with pytest.raises(ValueError, match="no image-token rule"):
        AFMConfig(vision_model="llava")


# A table of sizes × models, each figure worked out by hand from the provider's published formula:
# gpt-4o / gpt-4.1 / o-series tiles (85 or 75 + 170 or 150 a tile), gpt-4o-mini's own multiplier (2833 +
# 5667 a tile), the patch models, and Anthropic's pixels / 750 after its resize (longest side 1568 px,
# at most about 1,600 tokens; docs.anthropic.com, "Vision").
PER_MODEL = [
    # model,             (w, h),       tokens   how
    ("gpt-4o", (800, 600), 765),  # shortest side 600 ≤ 768: 2 × 2 tiles: 85 + 4 × 170
    ("gpt-4.1", (800, 600), 765),  # the same tiles
    ("o3", (800, 600), 675),  # 75 + 4 × 150
    ("o1", (512, 512), 225),  # 75 + 150
    ("gpt-4o-mini", (800, 600), 25501),  # 2833 + 4 × 5667
    ("gpt-4o-mini-2024-07-18", (512, 512), 8500),  # a dated name takes its family's row: 2833 + 5667
    ("gpt-4.1-nano", (320, 320), 246),  # 10 × 10 patches × 2.46 = 246
    ("claude-sonnet-4-5", (1000, 1000), 1334),  # 1,000,000 / 750 = 1333.3
    ("claude-3-5-haiku-20241022", (200, 200), 54),  # 40,000 / 750 = 53.3
    ("claude-opus-4-1", (3000, 1500), 1599),  # scaled to 1549 × 774 (1,198,926 px) / 750 = 1598.6
    ("claude-sonnet-4-5", (1568, 300), 628),  # longest side at the limit, 470,400 / 750 = 627.2
]


@pytest.mark.parametrize(("model", "size", "tokens"), PER_MODEL)
def test_each_models_image_cost_follows_its_providers_formula(model, size, tokens):
    assert image_tokens(rule_for(model), *size, "high") == tokens


def test_anthropic_ignores_detail_and_an_unknown_size_costs_its_cap():
    claude = rule_for("claude-3-7-sonnet-latest")
    assert image_tokens(claude, 1000, 1000, "low") == image_tokens(claude, 1000, 1000, "high") == 1334
    assert image_tokens(claude, 0, 0, "auto") == 1600
