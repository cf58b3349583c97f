"""The compressed form of a tool result, and what its placeholder names: what a tool answered, shorter,
and saying so.

Tool output is often data (JSON, tables, files, logs) rather than sentences, which the extractive
compressor rightly leaves whole. So a short prose result takes the compressor's form when it makes one;
otherwise a result becomes a **digest** within the target share of its tokens and never more than
``DIGEST_MAX_TOKENS``: its first lines, its error and warning lines, its last lines, in order, each gap
marked with how many lines were left out, and a closing note of how much the digest shows, so the model
never mistakes a cut result for the whole one. A large result (a file read, a log dump) therefore costs a
bounded digest at Compressed and one line at Placeholder: ``[Turn 7 · tool read_file: billing/module_3.py,
40 lines]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..core.protocols import Compressor, TokenCounter
from ..core.units import ToolUnit

HEAD_MIN_TOKENS = 48  # a result shorter than this is sent whole: a cut would save too little to pay for its note
DIGEST_MAX_TOKENS = 400  # a compressed result is never longer than this, however long the result
PROSE_MAX_CHARS = 20_000  # a longer result is data (a file, a log), not prose: it goes straight to a digest
HEAD_SHARE, NOTABLE_SHARE = 0.4, 0.3  # of a digest: its first lines, its error lines; the rest is its last lines
NOTABLE = re.compile(r"\b(error|errors|exception|traceback|fail|failed|failure|fatal|panic|warning|denied)\b", re.I)
LABEL_CHARS = 60  # of a call's first argument, in its placeholder


def compress_result(text: str, compressor: Compressor, counter: TokenCounter, ratio: float) -> str:
    """``text`` shorter: the compressor's form (short prose), else a digest, else ``text`` itself."""
    if len(text) <= PROSE_MAX_CHARS:
        form = compressor.compress(text, ratio).text
        if form != text and counter.count(form) <= DIGEST_MAX_TOKENS:
            return form
    total = counter.count(text)
    if total < HEAD_MIN_TOKENS:
        return text
    return digest(text, counter, min(max(1, int(total * ratio)), DIGEST_MAX_TOKENS), total)


def digest(text: str, counter: TokenCounter, target: int, total: int) -> str:
    """The first lines, the notable (error) lines and the last lines of ``text`` within about ``target`` tokens,
    in order, gaps marked; a single long line is cut by characters, in proportion."""
    lines = text.splitlines()
    if len(lines) <= 1:
        shown = text[: max(1, len(text) * target // max(total, 1))].rstrip()
        return f"{shown}\n[… {max(0, total - counter.count(shown))} of {total} tokens left out]"
    kept: set[int] = set()
    spare = _take(range(len(lines)), lines, counter, int(target * HEAD_SHARE), kept)
    notable = [i for i, line in enumerate(lines) if i not in kept and NOTABLE.search(line)]
    spare = _take(notable, lines, counter, int(target * NOTABLE_SHARE) + spare, kept)
    _take(
        range(len(lines) - 1, -1, -1), lines, counter, target - int(target * (HEAD_SHARE + NOTABLE_SHARE)) + spare, kept
    )
    out, previous = [], -1
    for i in sorted(kept):
        if i > previous + 1:
            out.append(f"[… {i - previous - 1} lines left out]")
        out.append(lines[i])
        previous = i
    if previous < len(lines) - 1:
        out.append(f"[… {len(lines) - 1 - previous} lines left out]")
    out.append(f"[digest: {len(kept)} of {len(lines)} lines, {total} tokens in all]")
    return "\n".join(out)


def _take(order: Iterable[int], lines: list[str], counter: TokenCounter, budget: int, kept: set[int]) -> int:
    """Keep lines in ``order`` while they fit ``budget`` tokens (stopping at the first that does not); the
    tokens left over."""
    for i in order:
        if i in kept:
            continue
        cost = counter.count(lines[i]) + 1
        if cost > budget:
            break
        kept.add(i)
        budget -= cost
    return budget


def unit_label(unit: ToolUnit) -> str:
    """What a unit's placeholder names before its gist: its first call's first argument (a path, a query, an
    id) and how many lines its results ran to, so a cleared result still says what was there."""
    parts = []
    for call in unit.call.tool_calls[:1]:
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments
        first = next(iter(arguments.values()), "") if isinstance(arguments, dict) and arguments else arguments
        if isinstance(first, str | int | float) and str(first).strip():
            parts.append(" ".join(str(first).split())[:LABEL_CHARS])
    lines = sum(len(r.content.splitlines()) for r in unit.results)
    if lines > 1:
        parts.append(f"{lines} lines")
    return ", ".join(parts)
