"""Range placeholders: a run of consecutive messages that is not sent becomes one topic line.

Twenty stubs cost twenty lines and say little each; one line for the run ("[Turns 3–7: competitor
analysis, pricing]") keeps the conversation's shape for the cost of one. After packing, the runs of
messages left out are the candidates; the most relevant runs get their line first (a run's relevance is
its best message's score), while the tokens set aside for lines last. Pure arithmetic: the caller says
what each line costs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def runs(sent: np.ndarray, boundary: int | None = None) -> list[tuple[int, int]]:
    """The maximal runs ``[start, end)`` of messages not sent, in order; none crosses ``boundary`` (where the
    query stands between the history and the loop after it)."""
    out = np.flatnonzero(~sent)
    if not len(out):
        return []
    breaks = np.flatnonzero(np.diff(out) > 1)
    starts = np.concatenate([out[:1], out[breaks + 1]])
    ends = np.concatenate([out[breaks], out[-1:]]) + 1
    found = list(zip(starts.tolist(), ends.tolist()))
    if boundary is None:
        return found
    return [part for a, b in found for part in ([(a, boundary), (boundary, b)] if a < boundary < b else [(a, b)])]


def choose(
    candidates: list[tuple[int, int]],
    score: np.ndarray,
    cost: Callable[[int, int], int],
    spare: int,
    min_spare: int = 1,
) -> list[tuple[int, int]]:
    """The runs that get a line within ``spare`` tokens, most relevant first, returned in order. No line costs
    less than ``min_spare``, and the walk ends at the first line that does not fit (lines cost about the same),
    so few are priced."""
    if not candidates:
        return []
    bounds = np.asarray(candidates, dtype=np.int64).ravel()  # a0, b0, a1, b1, ...: every other segment is a run
    best = np.maximum.reduceat(score, bounds[:-1] if bounds[-1] == len(score) else bounds)[::2]
    chosen = []
    for k in np.lexsort((np.arange(len(candidates)), -best)).tolist():
        if spare < min_spare:
            break
        c = cost(*candidates[k])
        if c > spare:
            break
        chosen.append(candidates[k])
        spare -= c
    return sorted(chosen)
