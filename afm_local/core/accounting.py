"""Chat cost accounting: the one definition of what a packed context costs in tokens.

OpenAI counts a chat as each message's content plus a fixed overhead per message, and primes the
reply with a few more tokens. The structured memory sends every history item as one bullet line
inside one system message, so there an item costs its text plus a bullet and a newline. Everything
here is arithmetic over an injected ``TokenCounter``; the engine, the baselines, the server's
"tokens saved" header and the benchmarks all count through these functions. A message of content parts
costs its text parts here; its image parts are priced where they are made (``core.imagecost``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .config import AFMConfig, Render
from .protocols import TokenCounter
from .render import structured_skeleton

STRUCTURED_LINE_OVERHEAD = 2  # a bullet and a newline per item in the structured memory


def item_overhead(render: Render, config: AFMConfig) -> int:
    """Tokens a history item costs beyond its text: a chat message's overhead, or a bullet line's."""
    return config.per_message_overhead if render == "chat" else STRUCTURED_LINE_OVERHEAD


def message_cost(counter: TokenCounter, text: str, config: AFMConfig) -> int:
    """One chat message: its content plus the per-message overhead."""
    return counter.count(text) + config.per_message_overhead


def fixed_cost(
    counter: TokenCounter, query: str, preamble: str | None, render: Render, language: str, config: AFMConfig
) -> int:
    """What every context costs before any history: the query, the reply priming, and the preamble
    (chat) or the structured memory's system message with its headings and no items."""
    fixed = message_cost(counter, query, config) + config.reply_overhead
    if render == "chat":
        return fixed + (message_cost(counter, preamble, config) if preamble else 0)
    return fixed + message_cost(counter, structured_skeleton(preamble, language), config)


def sent_cost(
    counter: TokenCounter, messages: Iterable[Mapping[str, Any]], config: AFMConfig, image_tokens: int = 0
) -> int:
    """The exact cost of a list of chat messages as sent, reply priming included; ``image_tokens``: what
    their image parts cost."""
    texts = (content_text(m["content"]) for m in messages)
    return sum(message_cost(counter, text, config) for text in texts) + config.reply_overhead + image_tokens


def content_text(content: str | list[dict[str, Any]]) -> str:
    """A message's text as counted: a string, or its text parts joined (each part is counted whole)."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def verbatim_cost(
    history_tokens: Iterable[int], counter: TokenCounter, query: str, preamble: str | None, config: AFMConfig
) -> int:
    """What sending the whole history verbatim (chat render) would cost: the "tokens saved" baseline."""
    total = sum(t + config.per_message_overhead for t in history_tokens)
    return total + fixed_cost(counter, query, preamble, "chat", "en", config)
