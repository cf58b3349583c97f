"""The compressed form of a tool result: what a tool answered, shorter, and saying so.

Tool output is often data (JSON, tables, logs) rather than sentences, which the extractive compressor
rightly leaves whole. So a result takes the compressor's form when it makes one; otherwise a long
result keeps its leading lines within the target share of its tokens, followed by a line that says
how much was left out, so the model never mistakes a cut result for the whole one.
"""

from __future__ import annotations

from ..core.protocols import Compressor, TokenCounter

HEAD_MIN_TOKENS = 48  # a result shorter than this is sent whole: a cut would save too little to pay for its note


def compress_result(text: str, compressor: Compressor, counter: TokenCounter, ratio: float) -> str:
    """``text`` shorter: the compressor's form, else its head with a note of what was left out, else ``text``."""
    form = compressor.compress(text, ratio).text
    if form != text:
        return form
    total = counter.count(text)
    if total < HEAD_MIN_TOKENS:
        return text
    return head(text, counter, max(1, int(total * ratio)), total)


def head(text: str, counter: TokenCounter, target: int, total: int) -> str:
    """The leading lines of ``text`` within ``target`` tokens (a single long line is cut by characters, in
    proportion), then ``[… N of M tokens left out]``."""
    kept: list[str] = []
    used = 0
    for line in text.splitlines():
        cost = counter.count(line) + 1
        if used + cost > target:
            break
        kept.append(line)
        used += cost
    if not kept:
        kept = [text[: max(1, len(text) * target // max(total, 1))]]
    shown = "\n".join(kept).rstrip()
    return f"{shown}\n[… {max(0, total - counter.count(shown))} of {total} tokens left out]"
