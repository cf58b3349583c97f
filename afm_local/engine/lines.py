"""Range placeholders: one line for each run of messages left out (``core.ranges`` chooses which runs get
one), the tokens set aside for them before packing, and the loop's runs that still need a line, so a
left-out tool step is never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.ranges import choose, runs
from ..core.render import (
    range_placeholder,
)
from ..core.vocabulary import CRITICAL, DROPPED, FULL, PLACEHOLDER
from .job import Job, Plan

RANGE_EXTRA = 4  # a range line may run this many tokens over placeholder_max_tokens: it names turns A–B
MIN_LINE_TOKENS = 5  # no placeholder line is shorter: a run is not tried with less spare than this (+ overhead)


def unnamed(job: Job, fidelities: np.ndarray, lines: dict[int, Line]) -> int:
    """What lines for the loop's runs of left-out steps that got none would cost (range placeholders only)."""
    if not job.req.loop or job.cfg.placeholders != "range":
        return 0
    split = job.req.split_at(len(fidelities))
    missing = [a for a, _ in runs(fidelities != DROPPED, split) if a >= split and a not in lines]
    return len(missing) * (job.per_item + job.cfg.placeholder_max_tokens + RANGE_EXTRA)


def line_reserve(job: Job, available: int) -> int:
    """``placeholders="range"``: the tokens set aside for range lines, a share of what the CRITICAL messages
    leave (so the reservation never decides whether constraints fit); none when the whole history fits."""
    if job.cfg.placeholders == "message" or int(job.costs[:, FULL].sum()) <= available:
        return 0
    critical = int(job.costs[job.scored.classes == CRITICAL, FULL].sum())
    return int(job.cfg.placeholder_share * max(0, available - critical))


@dataclass(frozen=True, slots=True)
class Line:
    """One placeholder line for the run of messages from its start (the key it is stored under) to ``end``."""

    end: int
    text: str
    cost: int  # overhead included


def range_lines(job: Job, plan: Plan, fidelities: np.ndarray, spare: int) -> dict[int, Line]:
    """``placeholders="range"``: one line for each run of messages left out, most relevant runs first, within
    ``spare`` tokens (``core.ranges``). A run of one message is named by its own placeholder."""
    scores, cfg = plan.scored.scores, job.cfg
    made: dict[tuple[int, int], Line] = {}

    def line(a: int, b: int) -> Line:
        m = job.snap.messages[a]
        if b - a == 1:
            return Line(b, m.placeholder, m.tokens_placeholder + job.per_item)
        topic = job.snap.messages[a + int(np.argmax(scores[a:b]))].topic
        text, tokens = range_placeholder(a, b - 1, topic, job.counter, cfg.placeholder_max_tokens + RANGE_EXTRA)
        return Line(b, text, tokens + job.per_item)

    def cost(a: int, b: int) -> int:
        made[(a, b)] = made.get((a, b)) or line(a, b)
        return made[(a, b)].cost

    split = job.req.split_at(len(fidelities))
    candidates = runs(fidelities != DROPPED, split)
    first = np.where(np.arange(len(scores)) >= split, scores + 2, scores)  # the loop's runs are named first
    chosen = choose(candidates, first, cost, spare, min_spare=job.per_item + MIN_LINE_TOKENS)
    return {a: made[(a, b)] for a, b in chosen}


def cover(fidelities: np.ndarray, lines: dict[int, Line]) -> np.ndarray:
    """The fidelities with every message of a run that got a line counted as a placeholder."""
    covered = fidelities.copy()
    for start, line in lines.items():
        covered[start : line.end] = PLACEHOLDER
    return covered
