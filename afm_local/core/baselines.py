"""The three baselines the AFM paper compares against, as plain functions.

Each returns the same shape as the engine's ``Context`` where it matters for a comparison: the chat
messages to send (``[{"role", "content"}, ...]``, preamble first, query last) and the tokens they
cost, counted with the engine's token counter and the per-message and reply overheads from
``AFMConfig`` so that a token budget means the same thing for every strategy.

* ``stateless``: only the preamble and the query. The lower bound: no memory at all.
* ``naive_replay``: the newest history messages, verbatim, while they fit. What most chat
  front-ends do when a conversation outgrows the window; an early constraint falls out first.
* ``recency_compression``: the newest ``k`` messages verbatim and older ones in the engine's
  extractive compressed text, added newest-first while they fit. A stronger, still
  importance-blind baseline: it keeps more turns, but the constraint is old and compressed (or
  cut) like any other message.

None of them raises ``BudgetTooSmall``: a baseline simply sends what fits (the preamble and query are
always sent, even if they alone exceed the budget; ``tokens_used`` then reports the overrun).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .accounting import fixed_cost, message_cost
from .config import AFMConfig
from .protocols import Compressor, TokenCounter


@dataclass(slots=True)
class BaselineContext:
    """What a baseline sends: the messages, their token cost and which history messages went at which fidelity."""

    messages: list[dict[str, str]]
    tokens_used: int
    budget_tokens: int
    strategy: str
    fidelities: dict[int, str] = field(default_factory=dict)  # history index -> "full" | "compressed"


def _frame(
    counter: TokenCounter, query: str, preamble: str | None, config: AFMConfig
) -> tuple[list[dict[str, str]], dict[str, str], int]:
    head = [{"role": "system", "content": preamble}] if preamble else []
    tail = {"role": "user", "content": query}
    return head, tail, fixed_cost(counter, query, preamble, "chat", "en", config)


def stateless(
    history: Sequence[Mapping[str, str]],
    query: str,
    budget_tokens: int,
    *,
    counter: TokenCounter,
    preamble: str | None = None,
    config: AFMConfig | None = None,
) -> BaselineContext:
    """Preamble and query only: the model sees nothing of the conversation (paper's "stateless")."""
    config = config or AFMConfig()
    head, tail, fixed = _frame(counter, query, preamble, config)
    return BaselineContext(head + [tail], fixed, budget_tokens, "stateless")


def naive_replay(
    history: Sequence[Mapping[str, str]],
    query: str,
    budget_tokens: int,
    *,
    counter: TokenCounter,
    preamble: str | None = None,
    config: AFMConfig | None = None,
) -> BaselineContext:
    """The newest history messages verbatim, newest first, stopping at the first one that does not fit.

    Stopping (rather than skipping to older, smaller messages) keeps the replay a contiguous suffix
    of the chat, which is what a sliding window does.
    """
    config = config or AFMConfig()
    head, tail, used = _frame(counter, query, preamble, config)
    chosen: list[int] = []
    for i in range(len(history) - 1, -1, -1):
        c = message_cost(counter, history[i]["content"], config)
        if used + c > budget_tokens:
            break
        used += c
        chosen.append(i)
    chosen.reverse()
    body = [{"role": history[i]["role"], "content": history[i]["content"]} for i in chosen]
    return BaselineContext(head + body + [tail], used, budget_tokens, "naive_replay", {i: "full" for i in chosen})


def recency_compression(
    history: Sequence[Mapping[str, str]],
    query: str,
    budget_tokens: int,
    *,
    counter: TokenCounter,
    compressor: Compressor,
    preamble: str | None = None,
    config: AFMConfig | None = None,
    keep_recent: int = 6,
) -> BaselineContext:
    """The newest ``keep_recent`` messages verbatim, older ones compressed, newest first while they fit.

    Compression uses the engine's extractive compressor at ``config.compression_ratio``, so the only
    difference from AFM is that nothing here looks at importance or at the query. A recent message
    that does not fit verbatim is tried compressed; the walk stops at the first message that fits in
    neither form (a contiguous suffix, like ``naive_replay``).
    """
    config = config or AFMConfig()
    head, tail, used = _frame(counter, query, preamble, config)
    chosen: list[tuple[int, str, str]] = []
    n = len(history)
    for i in range(n - 1, -1, -1):
        text = history[i]["content"]
        options: list[tuple[str, str]] = []
        if n - i <= keep_recent:
            options.append(("full", text))
        short = compressor.compress(text, config.compression_ratio).text
        if counter.count(short) < counter.count(text):
            options.append(("compressed", short))
        elif not options:
            options.append(("full", text))  # compression saves nothing: send it whole
        placed = False
        for fidelity, body in options:
            c = message_cost(counter, body, config)
            if used + c <= budget_tokens:
                used += c
                chosen.append((i, fidelity, body))
                placed = True
                break
        if not placed:
            break
    chosen.reverse()
    body_msgs = [{"role": history[i]["role"], "content": body} for i, _, body in chosen]
    return BaselineContext(
        head + body_msgs + [tail],
        used,
        budget_tokens,
        "recency_compression",
        {i: fidelity for i, fidelity, _ in chosen},
    )


def top_k_similarity(
    history: Sequence[Mapping[str, str]],
    query: str,
    budget_tokens: int,
    *,
    counter: TokenCounter,
    similarity: np.ndarray,
    preamble: str | None = None,
    config: AFMConfig | None = None,
) -> BaselineContext:
    """Whole messages, most similar to the query first, while they fit; sent in chronological order.

    The plain retrieval baseline a user would reach for: ``similarity`` is the cosine of each history
    message's embedding to the query's (the engine's embedder). A message that does not fit is
    skipped and smaller, less similar ones are still tried.
    """
    config = config or AFMConfig()
    head, tail, used = _frame(counter, query, preamble, config)
    chosen: list[int] = []
    for i in sorted(range(len(history)), key=lambda i: (-float(similarity[i]), -i)):
        c = message_cost(counter, history[i]["content"], config)
        if used + c <= budget_tokens:
            used += c
            chosen.append(i)
    chosen.sort()
    body = [{"role": history[i]["role"], "content": history[i]["content"]} for i in chosen]
    return BaselineContext(head + body + [tail], used, budget_tokens, "top_k_similarity", {i: "full" for i in chosen})
